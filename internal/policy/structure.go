package policy

import (
	"regexp"
	"strconv"
)

// Structure in free text: the tokens an agent's error text carries in a
// machine's words, which stay put while the sentences around them change
// between CLI versions. Classify reads them before the phrase table:
//
//   - an HTTP status ("API Error: 529", "unexpected status 401", "HTTP 429",
//     "Error code: 529", `"code": 429`);
//   - an API error type or code ("rate_limit_error", "insufficient_quota",
//     "RESOURCE_EXHAUSTED", "authentication_error", litellm's exception names);
//   - an errno or transport code ("ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT").
//
// A status or a type names a family of kinds; the phrase families then pick
// the kind within it (a 429 that says "usage limit" is a usage window). The
// corpus in testdata/corpus.jsonl is the evidence for every token here.

// family is a set of kinds one structural token allows, and the kind it
// means when no phrase narrows it.
type family struct {
	name    string
	def     Kind
	allowed []Kind
}

var (
	famBadRequest = family{"400", KindInvalidInput, []Kind{KindUsageLimited, KindQuotaExhausted, KindContextExhausted,
		KindConfigError, KindAuthFailed, KindPermissionDenied, KindRefused, KindAgentFailed, KindInvalidInput}}
	famUnauthorized = family{"401", KindAuthFailed, []Kind{KindQuotaExhausted, KindAuthFailed}}
	famPayment      = family{"402", KindQuotaExhausted, []Kind{KindUsageLimited, KindQuotaExhausted}}
	// An API's 403 is about the key or account (no access to the model,
	// organisation, region or client), the same for every card: auth_failed.
	// A tool or sandbox denial inside the agent that happens to print a 403
	// is narrowed to permission_denied by its phrase (tool_permission).
	famForbidden = family{"403", KindAuthFailed, []Kind{KindRefused, KindPermissionDenied, KindAuthFailed}}
	famNotFound  = family{"404", KindConfigError, []Kind{KindConfigError}}
	famTimeout   = family{"408", KindTimeout, []Kind{KindTimeout}}
	famTooLarge  = family{"413", KindContextExhausted, []Kind{KindContextExhausted}}
	famTooMany   = family{"429", KindRateLimited, []Kind{KindUsageLimited, KindQuotaExhausted, KindRateLimited}}
	famUsage     = family{"usage", KindUsageLimited, []Kind{KindUsageLimited}}
	famServer    = family{"5xx", KindProviderUnavailable, []Kind{KindTimeout, KindStalled, KindNetwork, KindProviderUnavailable}}
)

func statusFamily(code int) (family, bool) {
	switch {
	case code == 400 || code == 422:
		return famBadRequest, true
	case code == 401:
		return famUnauthorized, true
	case code == 402:
		return famPayment, true
	case code == 403:
		return famForbidden, true
	case code == 404:
		return famNotFound, true
	case code == 408:
		return famTimeout, true
	case code == 413:
		return famTooLarge, true
	case code == 429:
		return famTooMany, true
	case code >= 500 && code <= 599:
		return famServer, true
	}
	return family{}, false
}

// statusRes find an HTTP status in text, each in one CLI's or SDK's shape.
var statusRes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bAPI Error:? ?\(?(\d{3})\b`),          // Claude Code: "API Error: 529 {…}", "API Error (529 {…})"
	regexp.MustCompile(`(?i)\berror code:? (\d{3})\b`),             // Python SDKs (aider): "Error code: 529 - {…}"
	regexp.MustCompile(`(?i)\bstatus(?: code)?:? (\d{3})\b`),       // Codex: "unexpected status 401", "last status: 429"; Gemini "got status: 429"
	regexp.MustCompile(`(?i)\bHTTP(?:/\d(?:\.\d)?)?:? ?(\d{3})\b`), // "HTTP 429:", "HTTP/1.1 503"
	regexp.MustCompile(`(?i)\berror:? \(?(\d{3})\b`),               // "Error: 400 {…}", "API error (429):", "Error 400:"
	regexp.MustCompile(`\bcode\\?"?\s*:\s*(\d{3})\b`),              // Gemini JSON: "code": 429, \"code\": 429, code: 429
	regexp.MustCompile(`(?m)^\s*(\d{3}) [{:]`),                     // "400 {"type":"error",…}"
	regexp.MustCompile(`\b(\d{3}) status code\b`),                  // Anthropic/OpenAI JS SDKs (cline): "429 status code (no body)"
	regexp.MustCompile(`(?i)\b(\d{3}) (?:Too Many Requests|Service Unavailable|Bad Gateway|Gateway Timeout|Internal Server Error|Unauthorized|Forbidden|Not Found|Bad Request|Overloaded)\b`),
}

// textStatus returns the first HTTP error status (400–599) text reports and
// where it stands.
func textStatus(text string) (int, int, bool) {
	best, code := -1, 0
	for _, re := range statusRes {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			n, _ := strconv.Atoi(text[m[2]:m[3]])
			if n < 400 || n > 599 {
				continue
			}
			if best < 0 || m[2] < best {
				best, code = m[2], n
			}
			break
		}
	}
	return code, best, best >= 0
}

// typeToken is an API error type or code and the family it names.
type typeToken struct {
	re  *regexp.Regexp
	fam family
}

func tok(words string, fam family) typeToken {
	return typeToken{regexp.MustCompile(`\b(` + words + `)\b`), fam}
}

// typeTokens are error types and codes as the APIs and SDKs spell them.
var typeTokens = []typeToken{
	tok(`usage_limit_reached|FreeUsageLimitError`, famUsage),
	tok(`insufficient_quota|billing_error`, famPayment),
	tok(`context_length_exceeded|ContextWindowExceededError`, famTooLarge),
	tok(`rate_limit_error|rate_limit_exceeded|provider_rate_limit_exceeded|rateLimitExceeded|RATE_LIMIT_EXCEEDED|RESOURCE_EXHAUSTED|RateLimitError`, famTooMany),
	tok(`authentication_error|UNAUTHENTICATED|API_KEY_INVALID|ACCESS_TOKEN_TYPE_UNSUPPORTED|AuthenticationError`, famUnauthorized),
	tok(`permission_error|PERMISSION_DENIED|client_validation_error|PermissionDeniedError`, famForbidden),
	tok(`not_found_error|model_not_found|NotFoundError|ProviderInitError|ProviderModelNotFoundError|NOT_FOUND`, famNotFound),
	tok(`overloaded_error|server_is_overloaded|api_error|UNAVAILABLE|stream_read_error|internalServerException|InternalServerError|ServiceUnavailableError|APIConnectionError`, famServer),
	tok(`invalid_request_error|INVALID_ARGUMENT|BadRequestError|invalid_value`, famBadRequest),
}

// textType returns the family of the first error type or code in text, the
// token itself and where it stands.
func textType(text string) (family, string, int, bool) {
	best, fam, word := -1, family{}, ""
	for _, t := range typeTokens {
		if loc := t.re.FindStringIndex(text); loc != nil && (best < 0 || loc[0] < best) {
			best, fam, word = loc[0], t.fam, text[loc[0]:loc[1]]
		}
	}
	return fam, word, best, best >= 0
}

// errnoRe finds an errno or transport error code: the request never got an
// answer from a server, which is the operator's network (proxy, DNS,
// firewall), not the provider.
var errnoRe = regexp.MustCompile(`\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|EPIPE|UND_ERR_[A-Z_]+|ConnectionRefused|FailedToOpenSocket)\b`)

func textErrno(text string) (string, int, bool) {
	loc := errnoRe.FindStringIndex(text)
	if loc == nil {
		return "", 0, false
	}
	return text[loc[0]:loc[1]], loc[0], true
}
