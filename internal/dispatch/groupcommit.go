package dispatch

import (
	"context"
	"sync"

	"github.com/drover-dev/drover/internal/store"
)

// groupCommit writes the live runs' own records (a run's start, its
// command line) with group commit: a change that arrives while another
// caller's commit is in flight waits for it, then goes with every other
// change that arrived meanwhile in one transaction (store.ApplyAll, each
// change in a savepoint of its own, so a refused one leaves the others
// written). Alone, a change is one Apply, as before. Each caller returns
// once its own change is committed, so a run's started event still
// precedes anything its agent does; K runs starting at once cost a few
// commits rather than K one after another (SQLite has one writer).
type groupCommit struct {
	mu      sync.Mutex
	pending []*commitReq
	busy    bool
}

type commitReq struct {
	ctx  context.Context
	ch   store.Change
	done chan error
}

// apply commits ch on st, with whatever else is waiting, and returns once
// it is committed (or refused).
func (g *groupCommit) apply(ctx context.Context, st store.Store, ch store.Change) error {
	req := &commitReq{ctx: ctx, ch: ch, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, req)
	if !g.busy {
		g.busy = true
		go g.drain(st)
	}
	g.mu.Unlock()
	return <-req.done
}

// drain commits what is pending, batch after batch, until nothing is.
func (g *groupCommit) drain(st store.Store) {
	for {
		g.mu.Lock()
		batch := g.pending
		g.pending = nil
		if len(batch) == 0 {
			g.busy = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		write(st, batch)
	}
}

// write commits a batch and tells each caller how its change went. A
// batch whose transaction fails is written again change by change, so one
// change's error stays its own.
func write(st store.Store, batch []*commitReq) {
	if len(batch) > 1 {
		chs := make([]store.Change, len(batch))
		for i, r := range batch {
			chs[i] = r.ch
		}
		// The first caller's context: every caller's is bounded alike
		// (runner.record), and it waits until this returns.
		if refused, err := st.ApplyAll(batch[0].ctx, chs); err == nil {
			for i, r := range batch {
				r.done <- refused[i]
			}
			return
		}
	}
	for _, r := range batch {
		r.done <- st.Apply(r.ctx, r.ch)
	}
}
