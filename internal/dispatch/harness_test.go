package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// world is a dispatcher on a real SQLite store with the sim agent.
type world struct {
	t   *testing.T
	dir string
	st  store.Store
	cfg *config.Config
	ops *operator.Service
}

// worldWorkflow is the dispatcher tests' WORKFLOW.md: the sim and planner
// agents, fast retries, a breaker and a webhook nobody listens on.
func worldWorkflow(maxAttempts int) *testkit.Workflow {
	return testkit.NewWorkflow().
		Set("agents", testkit.PlannerAgents).
		Set("policy", fmt.Sprintf(`max_attempts: %d
backoff: {base: 50ms, max: 100ms, jitter: 0}
kinds:
  network: {tiers: [50ms]}
  interrupted: {tiers: [0s]}
breaker: {threshold: 3, window: 1m, cooldown: 300ms}`, maxAttempts)).
		Set("dispatch", "{node: n1, lease: 3s, poll_interval: 100ms, max_concurrent: 4}").
		Set("notify", `{webhook: {url: "http://127.0.0.1:9/hook"}, allow_private: true}`)
}

// newWorld is a world on worldWorkflow(maxAttempts).
func newWorld(t *testing.T, maxAttempts int) *world {
	t.Helper()
	return newWorldFrom(t, worldWorkflow(maxAttempts))
}

// newWorldFrom is a world on wf, with a fresh SQLite store.
func newWorldFrom(t *testing.T, wf *testkit.Workflow) *world {
	t.Helper()
	dir := t.TempDir()
	cfg := wf.Config(t, dir)
	st := testkit.Store(t, testkit.SQLite)
	return &world{t: t, dir: dir, st: st, cfg: cfg, ops: &operator.Service{Store: st, Board: cfg.Board, Agents: []string{"sim", "planner"}}}
}

// outboxRows records one outbox row per notice, like the notifier does.
func outboxRows(cfg *config.Config, n Notice) []store.OutboxItem {
	b, _ := json.Marshal(map[string]string{"event": n.Event, "card": n.Card.Identifier})
	return []store.OutboxItem{{Key: n.Key + "/webhook", Channel: "webhook", Event: n.Event, CardID: n.Card.ID, Payload: b}}
}

func (w *world) dispatcher(node string) *Dispatcher {
	d, err := New(Options{Store: w.st, Config: w.cfg, Node: node, LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows})
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// run starts a dispatcher and returns a stop function that waits for it.
func (w *world) run(d *Dispatcher) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	return func() { cancel(); <-done }
}

func (w *world) add(title, agentName string, spec string) board.Card {
	w.t.Helper()
	raw := json.RawMessage(spec)
	in := operator.Input{Title: &title, Spec: &raw}
	if agentName != "" {
		in.Agent = &agentName
	}
	c, err := w.ops.Add(context.Background(), in)
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// waitFor polls until cond holds for the card or the deadline passes.
func (w *world) waitFor(ref string, what string, cond func(board.Card) bool) board.Card {
	w.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := w.st.GetCard(context.Background(), ref)
		if err == nil && cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: timed out waiting for %s; card is %+v", ref, what, c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *world) runs(cardID string) []board.Run {
	rs, err := w.st.ListRuns(context.Background(), store.RunFilter{CardID: cardID})
	if err != nil {
		w.t.Fatal(err)
	}
	return rs
}

func (w *world) events(cardID string) []board.Event {
	es, err := w.st.ListEvents(context.Background(), store.EventFilter{CardID: cardID})
	if err != nil {
		w.t.Fatal(err)
	}
	return es
}

func inState(s string) func(board.Card) bool { return func(c board.Card) bool { return c.State == s } }

func attempts(rs []board.Run) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%d:%s:%s", r.Attempt, r.Outcome, r.Kind))
	}
	return strings.Join(s, " ")
}

func inputSpec(raw []byte) operator.Input {
	r := json.RawMessage(raw)
	return operator.Input{Spec: &r}
}

// claimNoRun claims c for d exactly as the dispatcher does but does not
// start the agent, so a test can route the open run by hand; it returns the
// card as claimed.
func (w *world) claimNoRun(d *Dispatcher, c board.Card) board.Card {
	w.t.Helper()
	ctx := context.Background()
	cur, _ := w.st.GetCard(ctx, c.ID)
	d.startHook = func(board.Card, board.Run) bool { return false }
	if err := d.claimAndStart(ctx, cur, "sim", false); err != nil {
		w.t.Fatal(err)
	}
	cur, _ = w.st.GetCard(ctx, c.ID)
	return cur
}
