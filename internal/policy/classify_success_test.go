package policy

import (
	"strings"
	"testing"
)

// TestCleanExitWithErrorText: a run that exits 0 with error text and no
// final message is not succeeded: it gets the kind its text says, or
// unknown (counted) when nothing recognises the text (issue 21: opencode
// 1.3 exits 0 after every error; Claude Code 2.0 reports error_max_turns
// with is_error false and exit 0).
func TestCleanExitWithErrorText(t *testing.T) {
	cases := []struct {
		name string
		s    Signals
		want Kind
		src  string
	}{
		{"opencode 1.3.2 text mode: a refused connection on stderr", Signals{AgentKind: "command", ExitCode: 0,
			Stdout: "\x1b[0m\n> build · gpt-fake\n\x1b[0m\n",
			Stderr: "\x1b[91m\x1b[1mError: \x1b[0mUnable to connect. Is the computer able to access the url?\n"}, KindNetwork, "exit0:error_text"},
		{"a failed login in words nothing knows", Signals{AgentKind: "command", ExitCode: 0, Stderr: "Error: the frobnicator rejected you\n"},
			KindUnknown, "exit0:error_text"},
		{"structured output with errors and no final message", Signals{AgentKind: "gemini", ExitCode: 0,
			Structured: Structured{Present: true, Finished: true, ErrorMessages: []string{"[API Error: 401 Unauthorized]"}}}, KindAuthFailed, "exit0:error_text"},
		{"claude 2.0 error_max_turns with is_error false", Signals{AgentKind: "claude", ExitCode: 0,
			Structured: Structured{Present: true, Finished: true, Subtype: "error_max_turns"}}, KindMaxTurns, "structured:subtype"},
	}
	for _, c := range cases {
		got := Classify(c.s, nil)
		if got.Kind != c.want || !strings.Contains(got.Source, c.src) {
			t.Errorf("%s → %s (%s) %q; want %s (%s)", c.name, got.Kind, got.Source, got.Message, c.want, c.src)
		}
	}
}

// TestCleanExitStaysSucceeded: a clean exit with a final message, or whose
// stderr's error was followed by more (a retry that recovered), or whose
// answer quotes an error in prose, is succeeded.
func TestCleanExitStaysSucceeded(t *testing.T) {
	for name, s := range map[string]Signals{
		"final message beside errors": {AgentKind: "gemini", ExitCode: 0, Structured: Structured{Present: true, Finished: true,
			ResultText: "Done.", ErrorMessages: []string{"[API Error: 429]"}}},
		"recovered error on stderr": {AgentKind: "command", ExitCode: 0, Stdout: "done\n",
			Stderr: "Error: 429 Too Many Requests, retrying in 2s\nretry 1 succeeded\n"},
		"an answer about errors": {AgentKind: "command", ExitCode: 0, Stdout: "Error: handling now retries on 429.\n"},
		"a warning last":         {AgentKind: "command", ExitCode: 0, Stdout: "ok\n", Stderr: "warning: deprecated flag\n"},
	} {
		if got := Classify(s, nil); got.Kind != KindSucceeded {
			t.Errorf("%s → %s (%s); want succeeded", name, got.Kind, got.Source)
		}
	}
}

// TestErrorLine: the shapes of a line that reports an error, and lines
// that do not.
func TestErrorLine(t *testing.T) {
	for _, l := range []string{"Error: x", "error: unknown option '--x'", "ERROR: boom", "fatal: not a git repository",
		"[error] failed", "TypeError: fetch failed", "openai.AuthenticationError: Error code: 401", "API Error: 500",
		"ERROR 2026-05-15T12:02:02 +2ms service=server error=ConfigInvalidError", "✕ [API Error: terminated]",
		"Traceback (most recent call last):", "panic: runtime error"} {
		if !errorLine.MatchString(l) {
			t.Errorf("%q is not read as an error line", l)
		}
	}
	for _, l := range []string{"warning: x", "no errors found", "Errors: 0", "The error was fixed.", "done"} {
		if errorLine.MatchString(l) {
			t.Errorf("%q is read as an error line", l)
		}
	}
}
