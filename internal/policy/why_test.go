package policy

import (
	"strings"
	"testing"
)

// TestExplainNamesTheSignal: each way Classify decides is named, with the
// phrase family and its evidence when one took part.
func TestExplainNamesTheSignal(t *testing.T) {
	cases := []struct {
		s              Signals
		by, detail, ph string
	}{
		{Signals{ExitCode: 1, Stderr: "API Error: Unable to connect to API (ECONNRESET)"}, "errno", "ECONNRESET", ""},
		{Signals{ExitCode: 1, Stderr: `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Claude AI usage limit reached"}}`}, "status", "429", "usage_window"},
		{Signals{ExitCode: 1, Stderr: `{"error":{"type":"overloaded_error","message":"Overloaded"}}`}, "type", "overloaded_error", "provider_trouble"},
		{Signals{ExitCode: 1, Stderr: "Selected model is at capacity. Please try a different model."}, "phrase", "", "provider_trouble"},
		{Signals{ExitCode: 1, Structured: Structured{Present: true, IsError: true, ErrorType: "billing_error"}}, "structured", "error_type=billing_error", ""},
		{Signals{ExitCode: -1, Signaled: true, KilledFor: "stall"}, "killed", "stall", ""},
		{Signals{ExitCode: 3, Stderr: "the frobnicator said XJ-9"}, "fallback", "3", ""},
		{Signals{ExitCode: 2}, "exit_code", "2", ""},
		{Signals{AgentKind: "codex", Structured: Structured{Present: true, Finished: true, ResultText: "QUESTION: Which region?"}}, "protocol", "question_line", ""},
		{Signals{AgentKind: "claude", Structured: Structured{Present: true, Finished: true, Question: "Which region?"}}, "structured", "question", ""},
	}
	for _, c := range cases {
		cl := Classify(c.s, nil)
		w := Explain(cl)
		if w.By != c.by || w.Detail != c.detail || w.Phrase != c.ph || w.Words == "" {
			t.Errorf("%s (%s) → %+v; want by %s detail %q phrase %q", cl.Kind, cl.Source, w, c.by, c.detail, c.ph)
		}
		if c.ph != "" && len(w.Evidence) == 0 {
			t.Errorf("%s: phrase %s cites no evidence", cl.Source, c.ph)
		}
	}
	w := Explain(Classify(Signals{ExitCode: 1, Stderr: "NEEDS_HUMAN"}, []Rule{{Name: "ask", Regex: "NEEDS_HUMAN", Kind: KindInputRequired}}))
	if w.By != "rule" || !strings.Contains(w.Words, `"ask"`) {
		t.Errorf("rule → %+v", w)
	}
}
