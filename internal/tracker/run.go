package tracker

import (
	"context"
	"log/slog"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// Runner runs the sync, projection and delivery loops of one tracker on the
// leader. Webhooks call Wake to sync at once; polling every Interval is the
// fallback.
type Runner struct {
	Store     store.Store
	Syncer    *Syncer
	Projector *Projector
	Deliverer *Deliverer
	// Lead reports whether this process leads (nil: always).
	Lead func(ctx context.Context) (bool, error)
	// Interval is the poll interval (read each time; hot reload).
	Interval func() time.Duration
	// Synced is called after each sync pass, which may have changed cards
	// (the dispatcher's Refresh).
	Synced func()
	Log    *slog.Logger

	wake chan struct{}
}

// Wake asks for a sync now (a webhook said the tracker changed).
func (r *Runner) Wake() {
	select {
	case r.wakeCh() <- struct{}{}:
	default:
	}
}

func (r *Runner) wakeCh() chan struct{} {
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
	return r.wake
}

// Start makes the wake channel before the loops and webhooks share it.
func (r *Runner) Start() { r.wakeCh() }

// Run loops until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	r.Start()
	done := make(chan struct{})
	go func() { defer close(done); r.project(ctx) }()
	r.poll(ctx)
	<-done
}

func (r *Runner) lead(ctx context.Context) bool {
	if r.Lead == nil {
		return true
	}
	ok, err := r.Lead(ctx)
	if err != nil && ctx.Err() == nil {
		r.log().Warn("tracker: leadership check failed", "error", err)
	}
	return ok && err == nil
}

func (r *Runner) poll(ctx context.Context) {
	for {
		if r.lead(ctx) {
			// A failed pass is the Syncer's to report (Status, an error
			// line); what it wrote before it stopped may still need a tick.
			_ = r.Syncer.Pass(ctx)
			if r.Synced != nil {
				r.Synced()
			}
		}
		wait := r.Interval()
		if until := r.Syncer.Deferred(); time.Until(until) > wait {
			wait = time.Until(until)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-r.wake:
			t.Stop()
		}
	}
}

// project follows the store: after each change, the projector writes the
// rows the new events need and the deliverer sends what is due.
func (r *Runner) project(ctx context.Context) {
	changed := r.Store.Watch(ctx)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	leading := false
	for {
		if r.lead(ctx) {
			if !leading {
				if err := r.Projector.Reconcile(ctx); err != nil {
					r.log().Warn("tracker: reconciling projections failed; retrying", "error", err)
				} else {
					leading = true
				}
			}
			if leading {
				if _, err := r.Projector.Pass(ctx); err != nil && ctx.Err() == nil {
					r.log().Warn("tracker: following the event log failed; retrying", "error", err)
				}
				if _, _, err := r.Deliverer.Tick(ctx); err != nil && ctx.Err() == nil {
					r.log().Warn("tracker: delivering projections failed; retrying", "error", err)
				}
			}
		} else {
			leading = false
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case _, ok := <-changed:
			if !ok {
				changed = nil
			}
		}
	}
}

func (r *Runner) log() *slog.Logger { return logOr(r.Log) }

// nowOr is now(), or the wall clock when now is nil.
func nowOr(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}

// logOr is l, or the default logger when l is nil.
func logOr(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
