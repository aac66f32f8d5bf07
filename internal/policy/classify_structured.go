package policy

import "strconv"

// byStructured reads typed fields. Families that typed fields cannot split
// (server_error: network vs provider; 429: rate vs usage) are narrowed by
// the phrase table, but only within the family. An error type and an HTTP
// status read together: where the type's kind is not in the status's
// family (a rate_limit type beside a 401), the status wins and the source
// says which type it overruled.
func byStructured(st Structured, text string) (Classification, bool) {
	if !st.Present {
		return Classification{}, false
	}
	sc := func(k Kind, src string) (Classification, bool) {
		return Classification{Kind: k, Source: "structured:" + src}, true
	}
	switch {
	case st.Subtype == "error_max_turns":
		return sc(KindMaxTurns, "subtype")
	case st.TerminalReason == "max_turns":
		return sc(KindMaxTurns, "terminal_reason")
	case st.TerminalReason == "prompt_too_long":
		return sc(KindContextExhausted, "terminal_reason")
	case st.StopReason == "refusal":
		return sc(KindRefused, "stop_reason")
	case st.APIError == "connection_failed":
		// The request never reached the provider: the operator's network.
		return sc(KindNetwork, "api_error")
	}
	status, hasStatus := statusFamily(st.APIErrorStatus)
	if c, ok := byErrorType(st, text); ok {
		if !hasStatus || hasKind(status.allowed, c.Kind) {
			return c, true
		}
		// The type and the status disagree: the status is what the server
		// answered.
		if bs, ok := byStatus(st, text); ok {
			bs.Source += ",overruled:error_type=" + st.ErrorType
			return bs, true
		}
		return c, true
	}
	return byStatus(st, text)
}

// byErrorType reads the agent's own error type (claude's assistant error,
// the types the other kinds' parsers map theirs to).
func byErrorType(st Structured, text string) (Classification, bool) {
	sc := func(k Kind, src string) (Classification, bool) {
		return Classification{Kind: k, Source: "structured:" + src}, true
	}
	src := "error_type=" + st.ErrorType
	switch st.ErrorType {
	case "authentication_failed":
		// Claude Code reports a 403 (permission_error) under this type too:
		// a key or account that may not use the API fails every card of the
		// profile alike, so it pauses the profile like a bad key.
		if st.APIErrorStatus == 403 {
			return sc(KindAuthFailed, src+",api_error_status=403")
		}
		return sc(KindAuthFailed, src)
	case "billing_error":
		return sc(KindQuotaExhausted, src)
	case "rate_limit":
		return rateFamily(st, text, src)
	case "model_not_found":
		return sc(KindConfigError, src)
	case "config_error":
		return sc(KindConfigError, src)
	case "max_output_tokens":
		return sc(KindAgentFailed, src)
	case "server_error":
		return narrow(text, src, KindProviderUnavailable,
			KindNetwork, KindProviderUnavailable, KindTimeout, KindStalled)
	}
	return Classification{}, false
}

// byStatus reads the HTTP status the agent's output carries in a field.
func byStatus(st Structured, text string) (Classification, bool) {
	sc := func(k Kind, src string) (Classification, bool) {
		return Classification{Kind: k, Source: "structured:" + src}, true
	}
	src := "api_error_status=" + strconv.Itoa(st.APIErrorStatus)
	switch code := st.APIErrorStatus; {
	case code == 401:
		return sc(KindAuthFailed, src)
	case code == 402:
		return sc(KindQuotaExhausted, src)
	case code == 403:
		return sc(KindAuthFailed, src) // the key or account may not use this: every card alike
	case code == 404:
		return sc(KindConfigError, src) // unknown model or wrong endpoint
	case code == 413:
		return sc(KindContextExhausted, src)
	case code == 429:
		return rateFamily(st, text, src)
	case code >= 500 && code <= 599:
		return sc(KindProviderUnavailable, src)
	}
	return Classification{}, false
}

// rateFamily splits a 429 into a plan usage window, exhausted credit or a
// plain rate limit.
func rateFamily(st Structured, text, src string) (Classification, bool) {
	if st.RateLimitStatus == "rejected" {
		return Classification{Kind: KindUsageLimited, Source: "structured:rate_limit_event"}, true
	}
	return narrow(text, src, KindRateLimited, KindUsageLimited, KindQuotaExhausted, KindRateLimited)
}

// narrow lets the first phrase whose kind is allowed pick the kind;
// otherwise def.
func narrow(text, src string, def Kind, allowed ...Kind) (Classification, bool) {
	if p, ok := matchPhraseIn(text, allowed); ok {
		return Classification{Kind: p.Kind, Source: "structured:" + src + ",phrase:" + p.Name}, true
	}
	return Classification{Kind: def, Source: "structured:" + src}, true
}
