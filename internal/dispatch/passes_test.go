package dispatch

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// chattyAgent reports progress every few milliseconds until it is stopped,
// as a busy agent's output does; the dispatcher writes it at most once a
// second per run, so every live run commits about once a second.
type chattyAgent struct{}

func (chattyAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	for i := 0; ctx.Err() == nil; i++ {
		inv.Progress(agent.Progress{LastLine: fmt.Sprint("line ", i)})
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
	return agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: -1, Signaled: true}}, nil
}

// passCounting counts the store calls that only a full pass makes (the
// read of every claimed card) and the commits that wake the dispatcher.
type passCounting struct {
	store.Store
	claimedReads, commits atomic.Int64
}

func (p *passCounting) ListCards(ctx context.Context, f store.CardFilter) ([]board.Card, error) {
	if f.Claimed != nil && *f.Claimed && len(f.States) == 0 {
		p.claimedReads.Add(1)
	}
	return p.Store.ListCards(ctx, f)
}

func (p *passCounting) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	p.commits.Add(1)
	return p.Store.ApplyAll(ctx, chs)
}

// TestBusyRunsDoNotMakeEveryWakeUpAFullPass: with many live runs whose
// progress commits wake the node all the time, the node reads every claimed
// card (recovery and reconciliation) about once per fullEvery, not once per
// commit; an operator's move of a running card still stops its run.
func TestBusyRunsDoNotMakeEveryWakeUpAFullPass(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(3).Set("dispatch", "{node: n1, lease: 30s, poll_interval: 1h, max_concurrent: 20}"))
	st := &passCounting{Store: w.st}
	d, err := New(Options{Store: st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows,
		NewAgent: func(agent.Profile) (agent.Agent, error) { return chattyAgent{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var cards []board.Card
	for i := range 20 {
		cards = append(cards, w.add(fmt.Sprint("busy ", i), "", "{}"))
	}
	stop := w.run(d)
	defer stop()
	for _, c := range cards {
		w.waitFor(c.Identifier, "running", func(c board.Card) bool { return c.Claim != nil })
	}
	reads0, commits0 := st.claimedReads.Load(), st.commits.Load()
	const window = 3 * time.Second
	time.Sleep(window)
	reads, commits := st.claimedReads.Load()-reads0, st.commits.Load()-commits0
	if commits < 15 {
		t.Fatalf("only %d commits in %s: the premise (busy runs waking the node) does not hold", commits, window)
	}
	if most := int64(window/fullEvery) + 3; reads > most {
		t.Errorf("%d full passes (reads of every claimed card) in %s with %d wake-up commits; want at most %d", reads, window, commits, most)
	}

	// An operator takes one card back while the others keep the node busy:
	// its run stops, as after any operator move.
	// (Back in ready, the card may be claimed again: only the run that was
	// live at the move is looked at.)
	moved := cards[0]
	live := w.runs(moved.ID)
	if len(live) != 1 || live[0].Outcome != "" {
		t.Fatalf("runs of %s before the move: %s, want one open run", moved.Identifier, attempts(live))
	}
	if _, err := w.ops.Move(context.Background(), moved.ID, "ready", "taken back"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := w.st.GetRun(context.Background(), live[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run of %s was not stopped after an operator moved it: runs %s", moved.Identifier, attempts(w.runs(moved.ID)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
