package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/store"
)

func TestPages(t *testing.T) {
	h := newHarness(t)
	for path, want := range map[string]string{
		"/":                               "Needs attention",
		"/?fragment=1":                    "Retry queue",
		"/cards/" + h.w.Parked.Identifier: "Blue or green?",
		"/cards/" + h.w.Running.Identifier + "?fragment=1": "live log",
		"/columns/ready":     "Write the README",
		"/runs/" + h.w.RunID: "/api/v1/runs/" + h.w.RunID + "/log",
		"/static/app.js":     "EventSource",
	} {
		r := h.want(h.do("GET", path, nil), 200)
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
	if r := h.do("GET", "/?fragment=1", nil); strings.Contains(string(r.Body), "<html") {
		t.Error("a fragment carries the page shell")
	}
	h.want(h.do("GET", "/cards/DRV-999", nil), 404)
	h.want(h.do("GET", "/columns/nope", nil), 404)
	h.want(h.do("GET", "/nope", nil), 404)
}

// TestBoardAt5000 checks the board and state stay quick with 5,000 cards.
func TestBoardAt5000(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 cards: skipped with -short")
	}
	h := newHarness(t)
	ctx := context.Background()
	for i := 0; i < 5000; i++ {
		state := []string{"backlog", "ready", "done", "blocked"}[i%4]
		c := board.Card{Title: fmt.Sprintf("card %d", i), State: state, Labels: []string{}, BlockedBy: []string{}, Spec: json.RawMessage(`{}`)}
		if state == "blocked" {
			c.BlockReason = &board.BlockReason{What: "w", Where: "x", How: "y"}
		}
		if _, err := h.w.Store.CreateCard(ctx, "DRV", c, "operator"); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/", "/api/v1/state", "/columns/done?offset=1000"} {
		start := time.Now()
		r := h.want(h.do("GET", path, nil), 200)
		d := time.Since(start)
		t.Logf("GET %s: %v, %d bytes", path, d, len(r.Body))
		if d > 3*time.Second {
			t.Errorf("GET %s took %v", path, d)
		}
		if path == "/" && !strings.Contains(string(r.Body), "1150 more…") {
			t.Errorf("the board does not cap its columns")
		}
	}
}

// TestRunShowsItsCommandLine: the run page and the run object carry the
// command line the agent ran and the names of the variables it was given.
func TestRunShowsItsCommandLine(t *testing.T) {
	h := newHarness(t)
	argv := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--model", "x"}
	if err := h.w.Store.UpdateRunProgress(context.Background(), h.w.RunID, store.RunProgress{Argv: argv, EnvNames: []string{"ANTHROPIC_API_KEY", "PATH"}}); err != nil {
		t.Fatal(err)
	}
	page := string(h.want(h.do("GET", "/runs/"+h.w.RunID, nil), 200).Body)
	if !strings.Contains(page, "claude -p --output-format stream-json --verbose --model x") || !strings.Contains(page, "ANTHROPIC_API_KEY PATH") {
		t.Errorf("the run page lacks the command line:\n%s", page)
	}
	var run board.Run
	if err := json.Unmarshal(h.want(h.do("GET", "/api/v1/runs/"+h.w.RunID, nil), 200).Body, &run); err != nil {
		t.Fatal(err)
	}
	if strings.Join(run.Argv, " ") != strings.Join(argv, " ") || strings.Join(run.EnvNames, " ") != "ANTHROPIC_API_KEY PATH" {
		t.Errorf("run object: argv %q, env_names %q", run.Argv, run.EnvNames)
	}
}

// TestCardShowsTheVerifyStep: a run whose verify step failed says so on
// the card page (the command and its exit) and in the API's run object
// (the whole result, its output included).
func TestCardShowsTheVerifyStep(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	rs, err := h.w.Store.ListRuns(ctx, store.RunFilter{CardID: h.w.Retrying.ID})
	if err != nil || len(rs) != 1 {
		t.Fatalf("runs of the retrying card: %v %+v", err, rs)
	}
	r := rs[0]
	r.Kind, r.Verify = "verify_failed", &board.VerifyResult{Ran: 1, Command: "go test ./...", ExitCode: 1, Output: "--- FAIL: TestParse\nwant 3, got 4"}
	if err := h.w.Store.Apply(ctx, store.Change{Run: &r}); err != nil {
		t.Fatal(err)
	}
	page := string(h.want(h.do("GET", "/cards/"+h.w.Retrying.Identifier, nil), 200).Body)
	if !strings.Contains(page, "verify failed: go test ./... (exit 1)") || !strings.Contains(page, "want 3, got 4") {
		t.Errorf("the card page does not show the failed verify step:\n%s", page)
	}
	var got board.Run
	if err := json.Unmarshal(h.want(h.do("GET", "/api/v1/runs/"+r.ID, nil), 200).Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Verify == nil || got.Verify.Passed || got.Verify.Command != "go test ./..." || !strings.Contains(got.Verify.Output, "TestParse") {
		t.Errorf("run object's verify = %+v", got.Verify)
	}
}

// TestCardShowsItsProfileChain: the card page draws what explain says of
// the card's profile: the rule that chose it, its fallback chain, and the
// link the card runs on while its own profile is held.
func TestCardShowsItsProfileChain(t *testing.T) {
	h := newHarness(t, func(o *server.Options) {
		o.Explain = func(ctx context.Context, ref string) (any, error) {
			return map[string]any{"checks": []map[string]any{{"name": "agent profile not paused", "ok": true}},
				"next": "runs when a slot frees", "agent": "claude", "agent_by": "agents.routes[0] (label docs)",
				"fallback": []string{"codex", "gemini"}, "runs_on": "codex",
				"runs_on_why": "claude held: credits exhausted; ran on codex (agents.profiles.claude.fallback)"}, nil
		}
	})
	page := string(h.want(h.do("GET", "/cards/"+h.w.Retrying.Identifier, nil), 200).Body)
	for _, want := range []string{"agent <b>claude</b> (agents.routes[0] (label docs))", `<span class="in-use">codex</span>`, "gemini",
		"runs on codex now:</b> claude held: credits exhausted"} {
		if !strings.Contains(page, want) {
			t.Errorf("the card page does not show %q", want)
		}
	}
}
