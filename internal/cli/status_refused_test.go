package cli

import (
	"os"
	"strings"
	"testing"
)

// While WORKFLOW.md is refused, drover status still shows the board and
// lists the refusal (issue 13, item 3: status exited 2 with only the error,
// so an operator saw the refusal but not the board); other commands still
// refuse the file.
func TestStatusShowsTheBoardWhileTheConfigIsRefused(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "still counted")
	data, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), "policy:\n", "policy:\n  max_attempts: zero\n", 1)
	if broken == string(data) {
		t.Fatal("the test could not break the WORKFLOW.md (no policy: line)")
	}
	if err := os.WriteFile(e.cfg, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Counts struct{ Cards int } `json:"counts"`
		Errors []struct{ Code, Source, Message string }
	}
	e.okJSON(&s, "status")
	if s.Counts.Cards != 1 || len(s.Errors) == 0 || s.Errors[0].Code != "config_error" || !strings.Contains(s.Errors[0].Message, "policy.max_attempts") {
		t.Fatalf("status with a refused WORKFLOW.md: %+v", s)
	}
	if out := e.ok("status"); !strings.Contains(out, "config_error") || !strings.Contains(out, "ready 1") {
		t.Fatalf("status text:\n%s", out)
	}
	e.fails(2, "card", "ls")
}
