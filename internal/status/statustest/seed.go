// Package statustest seeds a store with one card in every situation the
// operator surfaces show (running, retrying, blocked with a give-up, parked
// with a question, a paused agent, a node error, a failing notification
// channel). The status and server tests share it.
package statustest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// Workflow is the WORKFLOW.md the seeded board uses.
const Workflow = `---
board:
  prefix: DRV
agents:
  default: sim
  profiles:
    sim: {kind: sim}
    script: {kind: command, command: /bin/true}
policy:
  max_attempts: 5
limits:
  max_cost_per_day_usd: 10
  max_cost_per_card_usd: 2
---
Work on {{ issue.title }}.
`

// World is what Seed made.
type World struct {
	Store  store.Store
	Config *config.Config
	Now    time.Time
	// Cards by role of their situation.
	Ready, Running, Retrying, Blocked, Parked board.Card
	RunID                                     string // the open run of Running
	LogPath                                   string // its log file
}

// Open returns an empty SQLite store in t.TempDir and the parsed Workflow.
func Open(t testing.TB) (store.Store, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	st := testkit.Store(t, testkit.SQLite)
	cfg, err := config.Parse([]byte(Workflow), dir)
	if err != nil {
		t.Fatal(err)
	}
	return st, cfg
}

// Seed fills st with the situations at now.
func Seed(t testing.TB, st store.Store, cfg *config.Config, now time.Time) World {
	t.Helper()
	ctx := context.Background()
	w := World{Store: st, Config: cfg, Now: now}
	mk := func(title, state string, prio int, labels ...string) board.Card {
		if labels == nil {
			labels = []string{}
		}
		c, err := st.CreateCard(ctx, "DRV", board.Card{Title: title, State: state, Priority: prio, Labels: labels,
			BlockedBy: []string{}, Spec: json.RawMessage(`{"sim":["succeeded"]}`), Agent: "sim"}, "operator")
		must(t, err)
		return c
	}
	apply := func(ch store.Change) { t.Helper(); must(t, st.Apply(ctx, ch)) }

	w.Ready = mk("Write the README", "ready", 2, "docs")

	// Running: claimed, one open run with progress and a log file.
	c := mk("Fix the flaky login test", "ready", 1, "bug", "tests")
	c.Claim = &board.Claim{Owner: "node-a", Epoch: c.Version + 1, LeaseUntil: now.Add(time.Minute)}
	c.State = "in_progress"
	run := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 2, RetryEpoch: c.RetryEpoch, ClaimEpoch: c.Claim.Epoch,
		Node: "node-a", Agent: "sim", ClaimedAt: now.Add(-95 * time.Second)}
	apply(store.Change{Card: &c, NewRun: &run, Events: []board.Event{{At: now.Add(-95 * time.Second), CardID: c.ID, RunID: run.ID, Type: board.EvClaimed, Actor: "dispatcher:node-a"}}})
	w.LogPath = filepath.Join(os.TempDir(), "drover-statustest-"+run.ID+".log")
	must(t, os.WriteFile(w.LogPath, []byte("starting\nrunning go test ./...\nok  login 0.2s\nFAIL flaky 1.1s\n"), 0o600))
	if tt, ok := t.(interface{ Cleanup(func()) }); ok {
		tt.Cleanup(func() { os.Remove(w.LogPath) })
	}
	started := now.Add(-90 * time.Second)
	must(t, st.UpdateRunProgress(ctx, run.ID, store.RunProgress{LastOutput: "running go test ./...", TokensIn: 1200, TokensOut: 800,
		CostUSD: 0.42, StartedAt: &started, LogPath: w.LogPath, Workspace: "/tmp/ws/DRV-2"}))
	w.Running, _ = st.GetCard(ctx, c.ID)
	w.RunID = run.ID

	// Retrying: back in ready with a schedule, after a failed counted attempt.
	c = mk("Upgrade the HTTP client", "ready", 3)
	fin := now.Add(-30 * time.Second)
	exit := 1
	failed := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, Node: "node-a", Agent: "sim",
		Outcome: board.OutcomeFailed, Kind: "agent_failed", Counted: true, Decision: "retry in 1m30s", ExitCode: &exit,
		Error: "tests failed: 3 failures", ClaimedAt: now.Add(-2 * time.Minute), StartedAt: &fin, FinishedAt: &fin, CostUSD: 0.1}
	next := now.Add(90 * time.Second)
	c.NextAttemptAt = &next
	c.StateReason = "attempt 1 failed (agent_failed); retry in 1m30s"
	apply(store.Change{Card: &c, NewRun: &failed, Events: []board.Event{{At: fin, CardID: c.ID, RunID: failed.ID, Type: board.EvRetry, Actor: "dispatcher:node-a", Reason: c.StateReason}}})
	w.Retrying, _ = st.GetCard(ctx, c.ID)

	// Blocked: gave up after its attempts.
	c = mk("Migrate the billing schema", "ready", 2, "db")
	c.State = "blocked"
	c.StateReason = "gave up after 5 attempts"
	c.BlockReason = &board.BlockReason{Kind: "agent_failed", What: "the agent failed 5 times: migration 0042 does not apply",
		Where: "run 5, log .drover/logs/DRV-4/5.log", How: "fix the spec, then drover card resume DRV-4"}
	c.GaveUp = &board.GaveUp{RunID: "r5", Attempts: 5, Kind: "agent_failed", Reason: "max_attempts 5 used", At: now.Add(-time.Hour)}
	apply(store.Change{Card: &c, Events: []board.Event{{At: now.Add(-time.Hour), CardID: c.ID, Type: board.EvGaveUp, Actor: "dispatcher:node-a", Reason: c.StateReason}}})
	w.Blocked, _ = st.GetCard(ctx, c.ID)

	// Parked: the agent asked a question.
	c = mk("Pick a logo colour", "ready", 4)
	c.State = "awaiting_input"
	c.StateReason = "the agent asked a question"
	apply(store.Change{Card: &c, Comments: []board.Comment{{CardID: c.ID, Author: "agent:sim", Body: "Question: Blue or green?", At: now.Add(-time.Minute)}},
		Events: []board.Event{{At: now.Add(-time.Minute), CardID: c.ID, Type: board.EvParked, Actor: "dispatcher:node-a", Reason: "input_required"}}})
	w.Parked, _ = st.GetCard(ctx, c.ID)

	// A paused agent profile, a node with a config error, a failing channel.
	apply(store.Change{AgentState: &store.AgentState{Name: "script", State: "paused", Kind: "auth_failed",
		Reason: "auth_failed on card DRV-9: paused until an operator runs drover agent resume", UpdatedAt: now.Add(-10 * time.Minute)}})
	tick := now.Add(-3 * time.Second)
	must(t, st.TouchNode(ctx, store.Node{Name: "node-a", PID: 4242, StartedAt: now.Add(-time.Hour), SeenAt: now, Running: 1, LastTick: &tick,
		Status: json.RawMessage(`{"config_error":"WORKFLOW.md line 12: policy.max_attempts: 0 is refused; the last good config is kept"}`)}))
	apply(store.Change{Outbox: []store.OutboxItem{{Key: "k-blocked-1", Channel: "slack", Event: "gave_up", CardID: w.Blocked.ID, Payload: json.RawMessage(`{}`)}}})
	due, err := st.DueOutbox(ctx, now.Add(time.Hour), 10)
	must(t, err)
	for _, d := range due {
		must(t, st.MarkOutbox(ctx, d.ID, store.OutboxResult{At: now, Error: "slack: HTTP 500", NextAt: now.Add(time.Hour)}))
	}
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
