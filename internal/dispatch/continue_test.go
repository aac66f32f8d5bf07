package dispatch

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/policy"
)

// turnsAgent plays an agent that runs several turns in one session (codex
// app-server): after its first turn it asks Continue, then moves its own
// card on to review, as an agent says it is done, and asks again.
type turnsAgent struct {
	ops     *operator.Service
	answers []bool
}

func (a *turnsAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	a.answers = append(a.answers, inv.Continue != nil && inv.Continue(ctx))
	if _, err := a.ops.Move(ctx, inv.Card.ID, "review", "the agent finished"); err != nil {
		return agent.Result{}, err
	}
	a.answers = append(a.answers, inv.Continue(ctx))
	return agent.Result{Signals: policy.Signals{AgentKind: "codex", ExitCode: 0}}, nil
}

// TestContinueWhileTheCardWantsWork: the dispatcher tells a multi-turn
// agent to go on while its card is in the running column under its claim,
// and to stop once the card moved on.
func TestContinueWhileTheCardWantsWork(t *testing.T) {
	w := newWorld(t, 3)
	ag := &turnsAgent{ops: w.ops}
	d, err := New(Options{Store: w.st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows,
		NewAgent: func(agent.Profile) (agent.Agent, error) { return ag, nil }})
	if err != nil {
		t.Fatal(err)
	}
	stop := w.run(d)
	defer stop()
	c := w.add("two turns", "", "{}")
	w.waitFor(c.Identifier, "review after the run", func(c2 board.Card) bool { return c2.State == "review" && c2.Claim == nil })
	if len(ag.answers) != 2 || !ag.answers[0] || ag.answers[1] {
		t.Errorf("Continue answered %v, want [true false]", ag.answers)
	}
}
