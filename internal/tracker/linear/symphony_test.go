package linear_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/linear"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/tracker/linear"
	"github.com/drover-dev/drover/internal/tracker/trackertest"
)

// toFake sends every request to the fake, whatever host it names: the
// WORKFLOW.md under test stays exactly as Symphony ships it (no endpoint).
type toFake struct{ u *url.URL }

func (f toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = f.u.Scheme, f.u.Host
	r.URL.Path = "/"
	return http.DefaultTransport.RoundTrip(r)
}

// Symphony's own elixir/WORKFLOW.md loads unchanged — tracker, polling,
// workspace, hooks, agent and codex sections and its Liquid prompt — keys
// drover does not use are reported once, never fatal, and drover dispatches
// from the Linear fake with it: the issue's card is claimed, its agent
// started, and the issue moved to In Progress.
func TestSymphonyWorkflowDispatchesFromLinear(t *testing.T) {
	home, bin := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("LINEAR_API_KEY", "lin_api_symphony")
	// The hooks clone a repository and the agent is Codex: stand-ins that
	// need no network (what Codex prints is the realcli tests' business).
	for name, script := range map[string]string{"git": "#!/bin/sh\nexit 0\n", "codex": "#!/bin/sh\ncat >/dev/null\nexit 0\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	cfg, err := config.Load("testdata/symphony-elixir-WORKFLOW.md")
	if err != nil {
		t.Fatalf("Symphony's WORKFLOW.md does not load: %v", err)
	}
	tc := cfg.Tracker
	if tc.Kind != "linear" || tc.ProjectSlug != "symphony-0c79b11b75ea" || tc.APIKey != "lin_api_symphony" ||
		strings.Join(tc.ActiveStates, ",") != "Todo,In Progress,Merging,Rework" || len(tc.TerminalStates) != 5 {
		t.Fatalf("tracker = %+v", tc)
	}
	if cfg.Dispatch.PollInterval != 5*time.Second || cfg.Dispatch.MaxConcurrent != 10 || cfg.Dispatch.MaxTurns != 20 {
		t.Errorf("polling and agent sections: %+v", cfg.Dispatch)
	}
	if !strings.HasPrefix(cfg.Workspace.Root, home) || !strings.Contains(cfg.Hooks.AfterCreate, "git clone --depth 1 https://github.com/openai/symphony .") {
		t.Errorf("workspace %q, hooks %+v", cfg.Workspace.Root, cfg.Hooks)
	}
	if p := cfg.Agents.Profiles[cfg.Agents.Default]; p.Kind != "codex" {
		t.Errorf("the codex section makes profile %+v", p)
	}
	// codex.command is split as bash -lc would: the file's model choice,
	// --config 'model="gpt-5.5"', reaches codex without the shell's quotes
	// (with them codex read no model and ran its default).
	if p := cfg.Agents.Profiles[cfg.Agents.Default]; !slices.Contains(p.Args, `model="gpt-5.5"`) || !slices.Contains(p.Args, "shell_environment_policy.inherit=all") {
		t.Errorf("codex.command became args %q", p.Args)
	}
	// Since app-server mode (issue 11) drover reads every key of this
	// file, codex's approval_policy and sandboxes included.
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings for Symphony's file, which drover reads whole: %q", cfg.Warnings)
	}
	// A Symphony key drover does not read is reported once, never fatal.
	raw, err := os.ReadFile("testdata/symphony-elixir-WORKFLOW.md")
	if err != nil {
		t.Fatal(err)
	}
	withUnused := strings.Replace(string(raw), "  approval_policy: never\n", "  approval_policy: never\n  read_timeout_ms: 5000\n", 1)
	unused := filepath.Join(t.TempDir(), "WORKFLOW.md")
	if err := os.WriteFile(unused, []byte(withUnused), 0o644); err != nil {
		t.Fatal(err)
	}
	if c2, err := config.Load(unused); err != nil {
		t.Errorf("an unused Symphony key is fatal: %v", err)
	} else if len(c2.Warnings) != 1 || !strings.Contains(c2.Warnings[0], "codex.read_timeout_ms") {
		t.Errorf("warnings = %q, want one naming codex.read_timeout_ms", c2.Warnings)
	}

	ln := fake.New("symphony-0c79b11b75ea")
	ln.APIKey = "lin_api_symphony"
	t.Cleanup(ln.Close)
	u, _ := url.Parse(ln.URL)
	id := ln.AddIssue("Make the dashboard faster", "The board page takes 3s.", "Todo")
	ln.AddIssue("Someday", "", "Backlog")

	k := kit
	k.New = func(t *testing.T, c tracker.Config) tracker.Tracker {
		return linear.New(linear.Options{Config: c, HTTP: &http.Client{Transport: toFake{u}}})
	}
	w := trackertest.Attach(t, k, lnFake{ln}, cfg)
	w.SyncOK()
	cards := w.Cards()
	if len(cards) != 1 || cards[0].External.ID != id || cards[0].External.Key != "ENG-1" {
		t.Fatalf("cards = %+v, want the Todo issue only", cards)
	}
	w.Serve()
	var runs []board.Run
	for range 1000 {
		if runs = w.Runs(cards[0]); len(runs) > 0 && runs[0].StartedAt != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(runs) == 0 || runs[0].StartedAt == nil || runs[0].Agent != "codex" {
		t.Fatalf("no codex run started: %+v", runs)
	}
	ctx := context.Background()
	for range 100 {
		_, _ = w.Proj.Pass(ctx)
		_, _, _ = w.Del.Tick(ctx)
		if ln.Issue(id).State != "Todo" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	moved := false
	for _, r := range ln.Log() {
		if r.Op == "DroverMove" && r.Vars["stateId"] == "state-3" { // In Progress
			moved = true
		}
	}
	if !moved {
		t.Fatalf("the issue was never moved to In Progress: %v", ln.Log())
	}
}
