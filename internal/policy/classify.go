package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// Classify gives the verdict on one finished run. It is pure: everything it
// needs, including the time used to resolve "resets 3pm", is in s.
//
// Order, first answer wins:
//  1. the profile's own rules (rule:NAME);
//  2. drover's own reason for stopping the process (killed:REASON);
//  3. a clean exit: succeeded, or input_required when the agent stopped at a
//     permission it was denied (structured:permission_denials), asked through
//     a tool the CLI could not serve (structured:question), or ended its final
//     message with drover's QUESTION: line (protocol:question_line, see
//     question.go);
//  4. typed fields of the agent's structured output (structured:FIELD), some
//     narrowed by the phrase table within their family;
//  5. structure in the error text: an HTTP status (text:status=N), an API
//     error type or code (text:type=T), each narrowed by the phrase table
//     within its family, or an errno name (text:errno=E); see structure.go;
//  6. the phrase table (phrase:NAME);
//  7. the exit code: agent_failed only when there was no text at all,
//     otherwise unknown with the text kept whole in Message.
func Classify(s Signals, rules []Rule) Classification {
	text := failureText(s)
	c := classify(s, rules, text)
	if c.Message == "" {
		c.Message = primaryMessage(s)
	}
	addRetry(&c, s, text)
	return c
}

func classify(s Signals, rules []Rule, text string) Classification {
	raw := s.Stdout
	if s.Stderr != "" {
		raw += "\n" + s.Stderr
	}
	// What drover itself did to the run comes first: a profile rule matching
	// the output of a run drover stopped must not charge the stop to the card.
	if c, ok := byKill(s); ok {
		return c
	}
	for _, r := range rules {
		if r.matches(s.ExitCode, raw) {
			return Classification{Kind: r.Kind, Source: "rule:" + r.Name}
		}
	}
	st := s.Structured
	if s.ExitCode == 0 && !s.Signaled && !st.IsError {
		return bySuccess(s)
	}
	if c, ok := byStructured(st, text); ok {
		return c
	}
	if c, ok := byTextStructure(text, s.AgentKind == "command"); ok {
		return c
	}
	if p, ok := matchPhrase(text); ok {
		return Classification{Kind: p.Kind, Source: "phrase:" + p.Name, Message: matchedLine(p, text)}
	}
	return byExit(s, text)
}

// killKinds maps Signals.KilledFor to a kind. "spend" means the card's spend
// cap stopped the run: it blocks the card (an operator raises the cap), never
// retried on its own.
var killKinds = map[string]Kind{
	"timeout":  KindTimeout,
	"stall":    KindStalled,
	"cancel":   KindCancelled,
	"shutdown": KindInterrupted,
	"spend":    KindSpendLimit,
}

var killWords = map[string]string{
	"timeout":  "drover stopped the run: it exceeded its total time limit",
	"stall":    "drover stopped the run: no output for the stall timeout",
	"cancel":   "drover stopped the run: an operator cancelled it",
	"shutdown": "drover stopped the run: the dispatcher was shutting down",
	"spend":    "drover stopped the run: a spend cap was reached",
}

func byKill(s Signals) (Classification, bool) {
	k, ok := killKinds[s.KilledFor]
	if !ok {
		return Classification{}, false
	}
	msg := killWords[s.KilledFor]
	if s.StopReason != "" {
		msg = "drover stopped the run: " + s.StopReason
	}
	if last := primaryMessage(s); last != "" {
		msg += "; last output: " + last
	}
	src := "killed:" + s.KilledFor
	if (k == KindTimeout || k == KindStalled) && s.Structured.APIError == "connection_failed" && !s.Structured.Finished {
		// The agent was still waiting for a connection when its time ran
		// out (codex retries refused and DNS failures forever): the network
		// is the cause, not the card.
		return Classification{Kind: KindNetwork, Source: src + ",api_error", Message: msg}, true
	}
	return Classification{Kind: k, Source: src, Message: msg}, true
}

// bySuccess handles exit 0 with no error flagged.
func bySuccess(s Signals) Classification {
	st := s.Structured
	if q := strings.TrimSpace(st.Question); st.Present && q != "" {
		// The agent asked its human a typed question: through its own
		// protocol (codex app-server's request_user_input) or through a tool
		// the CLI could not serve (Claude's AskUserQuestion, disabled in
		// print mode). It stopped for the answer.
		return Classification{Kind: KindInputRequired, Source: "structured:question", Message: q, Question: q}
	}
	if st.Present && st.PermissionDenials > 0 {
		// Claude stopped at a permission it was denied and said what it
		// needs; granting it (a human answer) is what changes the outcome.
		msg := st.ResultText
		if len(st.DeniedTools) > 0 {
			msg = strings.TrimSuffix(fmt.Sprintf("denied: %s; %s", strings.Join(st.DeniedTools, ", "), msg), "; ")
		}
		return Classification{Kind: KindInputRequired, Source: "structured:permission_denials", Message: msg}
	}
	if st.Present && !st.Finished {
		// The CLI's structured stream began but never reached its own
		// end-of-run record (claude result, codex turn.completed, gemini
		// result, opencode's last step_finish), yet it exited 0: the stream
		// was cut or garbled, and calling that a success would be a guess.
		// codex's app-server driver says the same of a conversation cut
		// short (appserver: errEnded).
		msg := "the agent exited 0 but its output stream ended before its final event (truncated or malformed output)"
		if last := strings.TrimSpace(st.ResultText); last != "" {
			msg += "; last output: " + last
		}
		return Classification{Kind: KindUnknown, Source: "structured:unfinished", Message: msg}
	}
	if q, ok := QuestionLine(finalMessage(s)); ok {
		return Classification{Kind: KindInputRequired, Source: "protocol:question_line", Message: q, Question: q}
	}
	if st.NoFinalMessage != "" && st.Present && st.Finished && strings.TrimSpace(st.ResultText) == "" {
		// The agent can end a refused turn with exit 0 and no message;
		// calling that a success would be a confident guess.
		return Classification{Kind: KindUnknown, Source: "structured:no_agent_message", Message: st.NoFinalMessage}
	}
	return Classification{Kind: KindSucceeded, Source: "exit_code", Message: st.ResultText}
}

// finalMessage is the agent's last message: its structured final text, or
// for an agent without structured output the end of its stdout.
func finalMessage(s Signals) string {
	if s.Structured.Present {
		return s.Structured.ResultText
	}
	return s.Stdout
}

// byStructured reads typed fields. Families that typed fields cannot split
// (server_error: network vs provider; 429: rate vs usage) are narrowed by
// the phrase table, but only within the family.
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
	case "max_output_tokens":
		return sc(KindAgentFailed, src)
	case "server_error":
		return narrow(text, src, KindProviderUnavailable,
			KindNetwork, KindProviderUnavailable, KindTimeout, KindStalled)
	}
	src = "api_error_status=" + strconv.Itoa(st.APIErrorStatus)
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

// byTextStructure reads the structure in an error text: a status or an error
// type names a family, which the phrase table narrows; an errno alone means
// the network. The message is the line that decided.
//
// A command agent's stderr is any program's output (a test's "status 401",
// curl's 404), so there a status or type decides only with a phrase of its
// family: a bare one must not pause the profile.
func byTextStructure(text string, anyProgram bool) (Classification, bool) {
	decide := func(fam family, src string, at int) (Classification, bool) {
		if p, ok := matchPhraseIn(text, fam.allowed); ok {
			return Classification{Kind: p.Kind, Source: src + ",phrase:" + p.Name, Message: matchedLine(p, text)}, true
		}
		if anyProgram {
			return Classification{}, false
		}
		return Classification{Kind: fam.def, Source: src, Message: lineAt(text, at)}, true
	}
	if code, at, ok := textStatus(text); ok {
		fam, _ := statusFamily(code)
		return decide(fam, "text:status="+strconv.Itoa(code), at)
	}
	if fam, word, at, ok := textType(text); ok {
		return decide(fam, "text:type="+word, at)
	}
	if e, at, ok := textErrno(text); ok {
		return Classification{Kind: KindNetwork, Source: "text:errno=" + e, Message: lineAt(text, at)}, true
	}
	return Classification{}, false
}

func byExit(s Signals, text string) Classification {
	src := "exit_code:" + strconv.Itoa(s.ExitCode)
	if s.Signaled {
		src = "signal"
	}
	switch s.ExitCode {
	case 126, 127: // shell: not executable / command not found
		return Classification{Kind: KindConfigError, Source: src}
	}
	if strings.TrimSpace(text) == "" {
		msg := fmt.Sprintf("exit code %d and no error text", s.ExitCode)
		if s.Signaled {
			msg = "killed by a signal drover did not send, and no error text"
		}
		return Classification{Kind: KindAgentFailed, Source: src, Message: msg}
	}
	return Classification{Kind: KindUnknown, Source: src, Message: text}
}

// failureText is what the phrase table reads: the agent's own error texts
// when its structured output had any (never the model's prose, never the
// prompt echoed in a banner); otherwise stderr, and stdout for agents
// without structured output.
func failureText(s Signals) string {
	if len(s.Structured.ErrorMessages) > 0 {
		return joinUnique(s.Structured.ErrorMessages)
	}
	parts := []string{strings.TrimSpace(s.Stderr)}
	if !s.Structured.Present {
		parts = append(parts, strings.TrimSpace(s.Stdout))
	}
	return joinUnique(parts)
}

// primaryMessage is the one text that best says what happened.
func primaryMessage(s Signals) string {
	st := s.Structured
	if n := len(st.ErrorMessages); n > 0 {
		return st.ErrorMessages[n-1]
	}
	if st.ResultText != "" {
		return st.ResultText
	}
	if st.Present {
		return "" // stderr beside structured output is log noise
	}
	if e := strings.TrimSpace(s.Stderr); e != "" {
		return lastLine(e)
	}
	return lastLine(strings.TrimSpace(s.Stdout))
}

// matchedLine is the line of text in which p matched (the flattened text's
// match when only it matched: a message wrapped over lines).
func matchedLine(p Phrase, text string) string {
	if loc := p.Re.FindStringIndex(text); loc != nil {
		return lineAt(text, loc[0])
	}
	flat := flatten(text)
	if loc := p.Re.FindStringIndex(flat); loc != nil {
		return flat[max(loc[0]-120, 0):min(loc[1]+120, len(flat))]
	}
	return ""
}

// lineAt is the line of text holding byte offset at.
func lineAt(text string, at int) string {
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := len(text)
	if i := strings.IndexByte(text[at:], '\n'); i >= 0 {
		end = at + i
	}
	return strings.TrimSpace(text[start:end])
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

func joinUnique(parts []string) string {
	var out []string
	seen := map[string]bool{}
	for _, p := range parts {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return strings.Join(out, "\n")
}

// addRetry fills RetryAfter/RetryAt for kinds that wait on time.
func addRetry(c *Classification, s Signals, text string) {
	switch c.Kind {
	case KindRateLimited, KindUsageLimited, KindQuotaExhausted, KindProviderUnavailable:
	default:
		return
	}
	st := s.Structured
	if !st.ResetsAt.IsZero() && (c.Kind == KindRateLimited || c.Kind == KindUsageLimited) {
		c.RetryAt = st.ResetsAt
	}
	after, at := RetryHint(text, s.Now)
	if c.RetryAt.IsZero() {
		c.RetryAt = at
	}
	c.RetryAfter = after
	if c.RetryAfter == 0 && c.Kind == KindRateLimited && st.RetryDelay > 0 {
		if n := len(st.RetryStatuses); n > 0 && st.RetryStatuses[n-1] == 429 {
			c.RetryAfter = st.RetryDelay // the server's retry-after, as the CLI honoured it
		}
	}
	if c.RetryAfter == 0 && !c.RetryAt.IsZero() && !s.Now.IsZero() && c.RetryAt.After(s.Now) {
		c.RetryAfter = c.RetryAt.Sub(s.Now)
	}
}
