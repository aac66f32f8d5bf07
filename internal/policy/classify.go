package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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
//     question.go); but a clean exit with error text and no final message
//     is read as a failure (classify_success.go), and so is a result whose
//     subtype names an error (claude 2.0's error_max_turns with is_error
//     false);
//  4. typed fields of the agent's structured output (structured:FIELD), some
//     narrowed by the phrase table within their family, a status overruling
//     a type it disagrees with;
//  5. structure in the error text, for every kind: an HTTP status
//     (text:status=N), an API error type or code, a gRPC status name or a
//     library's error class (text:type=T), each narrowed by the phrase
//     table within its family, or an errno (text:errno=E); see structure.go;
//  6. the phrase table (phrase:NAME);
//  7. the lexicon (lexicon:TERM): the words each kind is talked about in,
//     for wording no phrase row has seen (lexicon.go);
//  8. the exit code: agent_failed only when there was no text at all,
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
	if s.ExitCode == 0 && !s.Signaled && !st.IsError && !strings.HasPrefix(st.Subtype, "error_") {
		return bySuccess(s)
	}
	if c, ok := byText(st, text, s.AgentKind == "command"); ok {
		return c
	}
	return byExit(s, text)
}

// byText reads a failure's typed fields, then the structure in its error
// text, then the phrase table, then the lexicon.
func byText(st Structured, text string, anyProgram bool) (Classification, bool) {
	if c, ok := byStructured(st, text); ok {
		return c, true
	}
	if c, ok := byTextStructure(text, anyProgram); ok {
		return c, true
	}
	if p, ok := matchPhrase(text); ok {
		// A test runner's report in a command agent's output is the code
		// under test talking: its words may say anything, and none of
		// them may pause the profile.
		if lookAlike(text, anyProgram) && Spec(p.Kind).ProfileLevel() {
			return Classification{}, false
		}
		return Classification{Kind: p.Kind, Source: "phrase:" + p.Name, Message: matchedLine(p, text)}, true
	}
	if h, ok := matchLexicon(text, nil); ok {
		if lookAlike(text, anyProgram) && Spec(h.kind).ProfileLevel() {
			return Classification{}, false
		}
		return Classification{Kind: h.kind, Source: "lexicon:" + h.term}, true
	}
	return Classification{}, false
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

// retryHintOf reads the stated wait from the failure's text: for an agent
// without structured output, from stderr, where its error goes, and only
// when that states none from stdout, where the code it printed or edited
// may carry a retry-after of its own.
func retryHintOf(s Signals, text string) (time.Duration, time.Time) {
	if len(s.Structured.ErrorMessages) > 0 || s.Structured.Present {
		return RetryHint(text, s.Now)
	}
	for _, src := range []string{s.Stderr, s.Stdout} {
		if after, at := RetryHint(src, s.Now); after > 0 || !at.IsZero() {
			return after, at
		}
	}
	return 0, time.Time{}
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
	after, at := retryHintOf(s, text)
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
