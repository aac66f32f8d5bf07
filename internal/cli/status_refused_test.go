package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/status/statustest"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// refusedBoard is a board seeded with a running and a retrying card under
// max_attempts 5, whose WORKFLOW.md was then broken (max_attempts: zero),
// as when an operator's edit is refused while serve runs on with its last
// good config.
func refusedBoard(t *testing.T) (*env, statustest.World) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	e := &env{t: t, dir: dir, cfg: filepath.Join(dir, "WORKFLOW.md"), dsn: "sqlite:" + filepath.Join(dir, ".drover", "drover.db")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(statustest.Workflow), dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlstore.Open(context.Background(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	w := statustest.Seed(t, st, cfg, time.Now().UTC())
	st.Close()
	broken := strings.Replace(statustest.Workflow, "max_attempts: 5", "max_attempts: zero", 1)
	if broken == statustest.Workflow {
		t.Fatal("the test could not break the WORKFLOW.md")
	}
	if err := os.WriteFile(e.cfg, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, w
}

// readRefused runs a read command that must succeed with exactly one
// warning on stderr naming the refused key.
func (e *env) readRefused(args ...string) string {
	e.t.Helper()
	code, out, errs := e.run(args...)
	if code != 0 {
		e.t.Fatalf("drover %s with a refused WORKFLOW.md: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "warning") || !strings.Contains(errs, "policy.max_attempts") {
		e.t.Errorf("drover %s: stderr %q, want one warning naming policy.max_attempts", strings.Join(args, " "), errs)
	}
	return out
}

// While WORKFLOW.md is refused, the read commands still read the board
// (card ls refused to list: issue 25), each with one warning on stderr.
func TestReadCommandsReadTheBoardWhileTheConfigIsRefused(t *testing.T) {
	e, w := refusedBoard(t)
	if out := e.readRefused("card", "ls"); !strings.Contains(out, w.Running.Identifier) || !strings.Contains(out, w.Retrying.Identifier) {
		t.Errorf("card ls:\n%s", out)
	}
	if out := e.readRefused("card", "show", w.Retrying.Identifier); !strings.Contains(out, w.Retrying.Title) {
		t.Errorf("card show:\n%s", out)
	}
	if out := e.readRefused("agent", "ls"); !strings.Contains(out, "sim") {
		t.Errorf("agent ls:\n%s", out)
	}
	out := e.readRefused("explain", w.Retrying.Identifier)
	if !strings.Contains(out, "limits unknown") || strings.Contains(out, "max_attempts ") {
		t.Errorf("explain shows the refused file's budgets:\n%s", out)
	}
	e.fails(2, "policy", "show") // the config itself is what is asked for
}

// Status shows the board and the refusal, and the attempt limits as
// unknown: not the defaults (10) the refused key falls back to, which are
// not what serve applies (it showed 1/10 where serve used 3: issue 25).
func TestStatusDoesNotClaimDefaultLimitsWhileTheConfigIsRefused(t *testing.T) {
	e, w := refusedBoard(t)
	out := e.readRefused("status")
	if !strings.Contains(out, "config_error") || !strings.Contains(out, w.Retrying.Identifier) {
		t.Fatalf("status text:\n%s", out)
	}
	for _, id := range []string{w.Running.Identifier, w.Retrying.Identifier} {
		row := rowOf(out, id)
		if strings.Contains(row, "/10") || strings.Contains(row, "/5") || !strings.Contains(row, "limit unknown") {
			t.Errorf("status claims an attempt limit for %s while WORKFLOW.md is refused: %q\n%s", id, row, out)
		}
	}
	var s struct {
		Counts   struct{ Cards int } `json:"counts"`
		Retrying []struct {
			MaxAttempts int `json:"max_attempts"`
		} `json:"retrying"`
		Errors []struct{ Code, Message string }
	}
	code, js, _ := e.run("--json", "status")
	if code != 0 {
		t.Fatalf("status --json: exit %d", code)
	}
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	if s.Counts.Cards == 0 || len(s.Errors) == 0 || s.Errors[0].Code != "config_error" || !strings.Contains(s.Errors[0].Message, "policy.max_attempts") ||
		len(s.Retrying) != 1 || s.Retrying[0].MaxAttempts != 0 {
		t.Fatalf("status --json with a refused WORKFLOW.md: %+v", s)
	}
}

// rowOf is the first line of out that starts with id (after indentation).
func rowOf(out, id string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), id+" ") {
			return l
		}
	}
	return ""
}
