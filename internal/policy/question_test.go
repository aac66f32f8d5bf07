package policy

import (
	"strings"
	"testing"
)

func TestQuestionLine(t *testing.T) {
	long := strings.Repeat("x", MaxQuestion+1)
	cases := []struct {
		name, final, want string
		ok                bool
	}{
		{"last line", "I looked at the deploy scripts.\nQUESTION: Deploy to staging or production?", "Deploy to staging or production?", true},
		{"trailing blank lines", "QUESTION: Which branch?\n\n  \n", "Which branch?", true},
		{"bold marker", "Done reading.\n**QUESTION:** Which database?", "Which database?", true},
		{"indented", "  QUESTION:   Which port?  ", "Which port?", true},
		{"not the last line", "QUESTION: Which port?\nI will use 8080.", "", false},
		{"lower case is prose", "question: which port?", "", false},
		{"mid-line is prose", "I wrote a QUESTION: section in the README.", "", false},
		{"empty question", "Stuck.\nQUESTION:   ", "", false},
		{"too long", "QUESTION: " + long, "", false},
		{"no message", "", "", false},
	}
	for _, c := range cases {
		got, ok := QuestionLine(c.final)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: QuestionLine(%q) = %q, %v; want %q, %v", c.name, excerptOf(c.final), got, ok, c.want, c.ok)
		}
	}
}

// TestQuestionProtocolEveryKind: a clean exit whose final message ends with
// the QUESTION: line parks the card with that question, whichever kind ran
// it; a denied AskUserQuestion (Structured.Question) comes first; a failed
// run is never read as a question.
func TestQuestionProtocolEveryKind(t *testing.T) {
	final := "I read the deploy config.\nQUESTION: Deploy to staging or production?"
	structured := func(kind string) Signals {
		return Signals{AgentKind: kind, Structured: Structured{Present: true, Finished: true, ResultText: final}}
	}
	cases := []struct {
		name string
		s    Signals
		want Kind
		q    string
		src  string
	}{
		{"claude", structured("claude"), KindInputRequired, "Deploy to staging or production?", "protocol:question_line"},
		{"codex", structured("codex"), KindInputRequired, "Deploy to staging or production?", "protocol:question_line"},
		{"gemini", structured("gemini"), KindInputRequired, "Deploy to staging or production?", "protocol:question_line"},
		{"opencode", structured("opencode"), KindInputRequired, "Deploy to staging or production?", "protocol:question_line"},
		{"command (stdout)", Signals{AgentKind: "command", Stdout: "build ok\n" + final + "\n"}, KindInputRequired, "Deploy to staging or production?", "protocol:question_line"},
		{"claude AskUserQuestion first", Signals{AgentKind: "claude", Structured: Structured{Present: true, Finished: true,
			Question: "Which region? (options: eu, us)", ResultText: "I need to know the region."}}, KindInputRequired, "Which region? (options: eu, us)", "structured:question"},
		{"a question in prose is a success", structured("codex"), KindSucceeded, "", "exit_code"},
		{"a failed run is not a question", Signals{AgentKind: "codex", ExitCode: 1, Structured: Structured{Present: true, IsError: true, Finished: true,
			ResultText: final, ErrorMessages: []string{"unexpected status 500 Internal Server Error"}}}, KindProviderUnavailable, "", "status=500"},
		{"codex: the line in stderr only is not the final message", Signals{AgentKind: "codex", Stderr: "QUESTION: from a log line?",
			Structured: Structured{Present: true, Finished: true, ResultText: "All done."}}, KindSucceeded, "", "exit_code"},
	}
	cases[6].s.Structured.ResultText = "Should I deploy to staging or production?"
	for _, c := range cases {
		got := Classify(c.s, nil)
		if got.Kind != c.want || got.Question != c.q || !strings.Contains(got.Source, c.src) {
			t.Errorf("%s → %s %q (%s); want %s %q (%s)", c.name, got.Kind, got.Question, got.Source, c.want, c.q, c.src)
		}
	}
}
