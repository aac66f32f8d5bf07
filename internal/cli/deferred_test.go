package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestCardLsSaysWhyCardsWaitBehindAPausedProfile: a ready card whose
// profile is paused is deferred, and card ls says so (its note was empty,
// and an operator could not tell why it sat in ready).
func TestCardLsSaysWhyCardsWaitBehindAPausedProfile(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "waits", "--state", "ready")
	e.ok("card", "add", "--title", "parked in backlog", "--state", "backlog")
	if out := e.ok("card", "ls"); strings.Contains(out, "deferred") {
		t.Fatalf("deferred before any pause:\n%s", out)
	}
	profile := e.fullConfigDefault()
	st := testkit.Open(t, e.dsn)
	now := time.Now()
	if err := st.Apply(context.Background(), store.Change{AgentState: &store.AgentState{Name: profile, State: policy.BreakerPaused,
		Kind: "auth_failed", Reason: "auth_failed on card DRV-9", UpdatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := e.ok("card", "ls")
	var waits, backlog string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, "waits"):
			waits = l
		case strings.Contains(l, "parked in backlog"):
			backlog = l
		}
	}
	if want := "deferred: profile " + profile + " paused (auth_failed); fix it, then drover agent resume " + profile; !strings.Contains(waits, want) {
		t.Errorf("the ready card's line %q lacks %q", waits, want)
	}
	if strings.Contains(backlog, "deferred") {
		t.Errorf("a backlog card is not waiting on the profile: %q", backlog)
	}
}

// fullConfigDefault is the default agent profile of e's WORKFLOW.md.
func (e *env) fullConfigDefault() string {
	lc, err := loadConfig(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return lc.Full.Agents.Default
}

// TestAgentLsShowsTheWholeCommandLine: a profile's args follow the kind's
// defaults, and agent ls shows the command line as it runs.
func TestAgentLsShowsTheWholeCommandLine(t *testing.T) {
	e := newEnv(t, "")
	wf := "---\nagents:\n  default: c\n  profiles:\n    c: {kind: claude, args: [--model, x]}\n---\nwork\n"
	if err := os.WriteFile(e.cfg, []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Name, Command string }
	e.okJSON(&rows, "agent", "ls")
	if len(rows) != 1 || !strings.HasPrefix(rows[0].Command, "claude -p --output-format stream-json --verbose") || !strings.HasSuffix(rows[0].Command, "--model x") {
		t.Errorf("agent ls = %+v", rows)
	}
}
