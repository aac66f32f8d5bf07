package policy

import (
	"fmt"
	"regexp"
	"strings"
)

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
	if c, ok := byCleanExitError(s); ok {
		return c
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

// byCleanExitError: a run that exited 0 with error text and no final
// message did not succeed (opencode before 1.4 exits 0 after every error,
// in text mode and with --format json). The text gets the kind its
// structure or phrases say, with ",exit0:error_text" in the source; when
// they say nothing known it is unknown, which counts.
func byCleanExitError(s Signals) (Classification, bool) {
	text, ok := cleanExitErrorText(s)
	if !ok {
		return Classification{}, false
	}
	const mark = ",exit0:error_text"
	if c, ok := byText(s.Structured, text, s.AgentKind == "command"); ok {
		c.Source += mark
		return c, true
	}
	return Classification{Kind: KindUnknown, Source: "exit0:error_text", Message: "the agent exited 0 with error text and no final message: " + text}, true
}

// cleanExitErrorText is the error text a clean exit left without a final
// message: the agent's structured error texts when its structured output
// has no final message; otherwise a last line of stderr that is an error
// line. stdout is the agent's answer, which may quote an error in prose.
func cleanExitErrorText(s Signals) (string, bool) {
	st := s.Structured
	if st.Present && strings.TrimSpace(st.ResultText) != "" {
		return "", false
	}
	if st.Present && len(st.ErrorMessages) > 0 {
		return joinUnique(st.ErrorMessages), true
	}
	out := strings.TrimSpace(stripANSI(s.Stderr))
	if out != "" && errorLine.MatchString(lastLine(out)) {
		return out, true
	}
	return "", false
}

// errorLine is a line that reports an error by its shape, whatever it
// says: "Error: …", "error: …", "ERROR …", "fatal: …", "[error] …", a
// named exception or error class ("TypeError: …", "AuthenticationError:
// …"), a traceback's head, "API Error: …".
var errorLine = regexp.MustCompile(`(?i)^\s*(?:[✕✖×❌]\s*)?\[?(?:\[?(?:error|fatal|panic|critical)\]?(?:\s*\[[^\]]*\])?\s*[:!\]]|error\s+\d{4}-\d\d-\d\d|api error\b|fatal error\b|unhandled (?:exception|rejection|error)\b|uncaught\b|traceback \(most recent call last\))|^\s*(?:\w+\.)*\w*(?:Error|Exception)\b(?:\s*\[[^\]]*\])?:\s`)
