package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
)

// DefaultInterval is how often the leader collects.
const DefaultInterval = time.Hour

// Worker collects on the leader only, every Interval, and records each
// report in the store (where `drover status` shows it).
type Worker struct {
	Store  store.Pruner
	Config func() config.Retention
	// Lead says whether this process leads now (store.Store.TryLead with the
	// dispatcher's node and TTL).
	Lead     func(ctx context.Context) (bool, error)
	Log      *slog.Logger
	Interval time.Duration // 0 = DefaultInterval
	First    time.Duration // delay before the first pass (0 = one minute)
	Options  Options
	Now      func() time.Time // nil = time.Now
}

// Run collects until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	every, first := w.Interval, w.First
	if every <= 0 {
		every = DefaultInterval
	}
	if first <= 0 {
		first = time.Minute
	}
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.Once(ctx)
		t.Reset(every)
	}
}

// Once makes one collection if this process leads, and records it.
func (w *Worker) Once(ctx context.Context) {
	if lead, err := w.Lead(ctx); err != nil || !lead {
		return
	}
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	o := w.Options
	o.DryRun = false
	rep, err := Collect(ctx, w.Store, w.Config(), now, o)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		w.Log.Warn("retention: collection failed part-way", "error", err, "events", rep.Events, "runs", rep.Runs, "logs", rep.Logs)
	} else if rep.Events+rep.Runs+rep.Logs+rep.Outbox+rep.Comments > 0 {
		w.Log.Info("retention: pruned old history", "events", rep.Events, "runs", rep.Runs, "logs", rep.Logs, "log_bytes", rep.LogBytes, "outbox", rep.Outbox,
			"agent_comments", rep.Comments, "duration_ms", rep.DurationMS)
	}
	if err := w.Store.RecordGC(ctx, rep); err != nil {
		w.Log.Warn("retention: could not record the collection", "error", err)
	}
}
