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
// read of every claimed card), the commits that wake the dispatcher and the
// commits that carry live progress.
type passCounting struct {
	store.Store
	claimedReads, commits, progressCommits atomic.Int64
}

func (p *passCounting) Apply(ctx context.Context, ch store.Change) error {
	p.commits.Add(1)
	if liveProgress(ch) {
		p.progressCommits.Add(1)
	}
	return p.Store.Apply(ctx, ch)
}

// liveProgress: ch carries live figures (not a start's).
func liveProgress(ch store.Change) bool {
	return len(ch.Progress) > 0 && ch.Progress[0].StartedAt == nil && ch.Progress[0].Argv == nil
}

func (p *passCounting) ListCards(ctx context.Context, f store.CardFilter) ([]board.Card, error) {
	if f.Claimed != nil && *f.Claimed && len(f.States) == 0 {
		p.claimedReads.Add(1)
	}
	return p.Store.ListCards(ctx, f)
}

func (p *passCounting) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	p.commits.Add(1)
	for _, ch := range chs {
		if liveProgress(ch) {
			p.progressCommits.Add(1)
			break
		}
	}
	return p.Store.ApplyAll(ctx, chs)
}

// TestBusyRunsDoNotMakeEveryWakeUpAFullPass: with many live runs and a
// board whose commits wake the node all the time, the node reads every
// claimed card (recovery and reconciliation) about once per fullEvery, not
// once per commit; the live runs' progress goes in one commit per flush,
// not one per run; an operator's move of a running card still stops its run.
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
	// Someone comments on a card every 10 ms: each comment is a commit that
	// wakes the node.
	busy, quiet := context.WithCancel(context.Background())
	commented := make(chan struct{})
	var comments atomic.Int64
	go func() {
		defer close(commented)
		for i := 0; busy.Err() == nil; i++ {
			if _, err := w.ops.Comment(busy, cards[1].ID, fmt.Sprint("note ", i)); err == nil {
				comments.Add(1)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	reads0, commits0, progress0 := st.claimedReads.Load(), comments.Load()+st.commits.Load(), st.progressCommits.Load()
	const window = 3 * time.Second
	time.Sleep(window)
	reads, commits, progress := st.claimedReads.Load()-reads0, comments.Load()+st.commits.Load()-commits0, st.progressCommits.Load()-progress0
	quiet()
	<-commented
	if commits < 50 {
		t.Fatalf("only %d commits in %s: the premise (a busy board waking the node) does not hold", commits, window)
	}
	if most := int64(window/fullEvery) + 3; reads > most {
		t.Errorf("%d full passes (reads of every claimed card) in %s with %d wake-up commits; want at most %d", reads, window, commits, most)
	}
	if most := int64(window/progressFlush) + 2; progress > most || progress == 0 {
		t.Errorf("%d commits of live progress in %s from %d runs; want 1 to %d (one per flush)", progress, window, len(cards), most)
	}
	for _, c := range cards[:3] {
		rs := w.runs(c.ID)
		if len(rs) == 0 || rs[len(rs)-1].LastOutput == "" {
			t.Errorf("%s: no live output recorded on its run: %+v", c.Identifier, rs)
		}
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

// failingProgress fails the first write that carries live progress, as a
// store outage would.
type failingProgress struct {
	store.Store
	failed atomic.Bool
}

func (f *failingProgress) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	for _, ch := range chs {
		if len(ch.Progress) > 0 && ch.Progress[0].LastOutput != "" && f.failed.CompareAndSwap(false, true) {
			return nil, store.ErrUnavailable
		}
	}
	return f.Store.ApplyAll(ctx, chs)
}

// TestProgressAFlushCouldNotWriteIsWrittenLater: figures a flush could not
// write (the store was away) are written by a later flush, not dropped.
func TestProgressAFlushCouldNotWriteIsWrittenLater(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(3).Set("dispatch", "{node: n1, lease: 30s, poll_interval: 1h, max_concurrent: 1}"))
	st := &failingProgress{Store: w.st}
	d, err := New(Options{Store: st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows,
		NewAgent: func(agent.Profile) (agent.Agent, error) { return onceThenQuiet{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	c := w.add("one line", "", "{}")
	stop := w.run(d)
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs := w.runs(c.ID)
		if len(rs) == 1 && rs[0].LastOutput == "the only line" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the line whose first write failed never reached the run: failed once %v, runs %+v", st.failed.Load(), rs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// onceThenQuiet reports one line and then nothing until it is stopped.
type onceThenQuiet struct{}

func (onceThenQuiet) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	inv.Progress(agent.Progress{LastLine: "the only line"})
	<-ctx.Done()
	return agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: -1, Signaled: true}}, nil
}
