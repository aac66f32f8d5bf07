package dispatch

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// progressFlush is how long a run's newest live figures wait to be written
// with every other run's: all of a node's progress goes in one transaction
// per progressFlush, instead of one commit per run and second (500 agents
// printing a line a second were 500 commits a second, most of a node's CPU
// after the agents' own output).
const progressFlush = 500 * time.Millisecond

// progressQueue holds the newest live figures of each run not yet written,
// and writes them: one change per progressFlush for all of a node's runs.
type progressQueue struct {
	st  store.Store
	log *slog.Logger
	// now: write each figure at once, in the caller's order (the
	// simulation, Options.Spawn).
	now bool
	// life ends when the dispatcher stops: figures not written by then
	// are dropped (routing writes each run's final ones).
	life context.Context

	mu       sync.Mutex
	pending  map[string]store.RunProgress
	flushing bool
}

// progress records live figures, at most once a second per run, and stops
// a run that crosses the card's spend cap.
func (d *Dispatcher) progress(j *job) func(agent.Progress) {
	var last time.Time
	var mu sync.Mutex
	capUSD := d.cfg.Load().Limits.MaxCostPerCardUSD
	var before float64
	if capUSD > 0 {
		before, _ = cardSpend(context.Background(), d.o.Store, j.card)
	}
	return func(p agent.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if capUSD > 0 && before+p.CostUSD > capUSD {
			j.cancel(errSpend)
		}
		if time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		d.live.queue(store.RunProgress{RunID: j.run.ID, LastOutput: excerpt.Clip(p.LastLine, 500),
			TokensIn: p.TokensIn, TokensOut: p.TokensOut, CostUSD: p.CostUSD})
	}
}

// queue keeps p as its run's newest figures until the next flush, which
// one goroutine makes progressFlush after the first figures queued since
// the last one. A flush that lands after the run was routed changes nothing
// (the store writes progress only to a run without an outcome).
func (q *progressQueue) queue(p store.RunProgress) {
	if q.now {
		_ = q.st.Apply(q.life, store.Change{Progress: []store.RunProgress{p}})
		return
	}
	q.put([]store.RunProgress{p}, true)
}

// put queues ps (replace: over figures already queued for the same run;
// else only where none are) and schedules a flush when none is due.
func (q *progressQueue) put(ps []store.RunProgress, replace bool) {
	q.mu.Lock()
	if q.pending == nil {
		q.pending = map[string]store.RunProgress{}
	}
	for _, p := range ps {
		if _, queued := q.pending[p.RunID]; replace || !queued {
			q.pending[p.RunID] = p
		}
	}
	start := !q.flushing
	q.flushing = true
	q.mu.Unlock()
	if start {
		time.AfterFunc(progressFlush, q.flush)
	}
}

// flush writes every queued run's figures in one change, in run id order
// (the rows' lock order on PostgreSQL).
func (q *progressQueue) flush() {
	q.mu.Lock()
	ps := make([]store.RunProgress, 0, len(q.pending))
	for _, p := range q.pending {
		ps = append(ps, p)
	}
	q.pending, q.flushing = nil, false
	q.mu.Unlock()
	if len(ps) == 0 || q.life.Err() != nil {
		return
	}
	sort.Slice(ps, func(a, b int) bool { return ps[a].RunID < ps[b].RunID })
	ctx, cancel := context.WithTimeout(q.life, 30*time.Second)
	defer cancel()
	if err := q.st.Apply(ctx, store.Change{Progress: ps}); err != nil && q.life.Err() == nil {
		q.log.Warn("could not record the live runs' progress; it is tried again with the next flush", "runs", len(ps), "err", err)
		q.put(ps, false) // newer figures of a run, if any came meanwhile, win
	}
}
