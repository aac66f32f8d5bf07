package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// drover classify --explain says which signal decided, in text and in JSON.
func TestClassifyExplain(t *testing.T) {
	t.Parallel()
	e := &env{t: t, dir: t.TempDir()}
	out, errOut, rc := e.drover(strings.NewReader("API Error: Unable to connect to API (ECONNRESET)\n"),
		"classify", "--agent", "command", "--exit-code", "1", "--explain")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	for _, want := range []string{"kind:       network", "signal:     errno ECONNRESET", "never got an answer from a server"} {
		if !strings.Contains(out, want) {
			t.Errorf("--explain text lacks %q:\n%s", want, out)
		}
	}
	out, errOut, rc = e.drover(strings.NewReader("unexpected status 503 Service Unavailable: Selected model is at capacity\n"),
		"--json", "classify", "--agent", "command", "--exit-code", "1", "--explain")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	var got struct {
		Kind    string `json:"kind"`
		Explain struct {
			By, Detail, Phrase string
			Evidence           []string
		} `json:"explain"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Kind != "provider_unavailable" || got.Explain.By != "status" || got.Explain.Detail != "503" ||
		got.Explain.Phrase != "provider_trouble" || len(got.Explain.Evidence) == 0 {
		t.Errorf("--explain --json = %s", out)
	}
}

// A clean run whose final message ends with the QUESTION: line classifies as
// input_required with the question, and --explain names the protocol.
func TestClassifyQuestionLine(t *testing.T) {
	t.Parallel()
	e := &env{t: t, dir: t.TempDir()}
	out, errOut, rc := e.drover(strings.NewReader("I read the config.\nQUESTION: Which region, eu or us?\n"),
		"--json", "classify", "--agent", "command", "--exit-code", "0", "--explain")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	var got struct {
		Kind, Question string
		Explain        struct{ By string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Kind != "input_required" || got.Question != "Which region, eu or us?" || got.Explain.By != "protocol" {
		t.Errorf("classify --json --explain = %s", out)
	}
}
