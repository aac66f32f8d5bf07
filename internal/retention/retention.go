// Package retention forgets old history so a store can live for years:
// events, finished runs, their log files and settled notifications older
// than the periods of WORKFLOW.md's retention section. It never removes an
// open run, the latest run of a card (or its log) or a notification not yet
// delivered. The leader runs it in small batches (Worker); `drover gc` runs
// it on demand (Collect).
package retention

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
)

// Defaults for a collection's pace.
const (
	// DefaultBatch is how many rows one statement deletes at most.
	DefaultBatch = 500
	// DefaultPause is the rest between two batches, so dispatching and the
	// dashboard keep the database between them.
	DefaultPause = 50 * time.Millisecond
)

// Options pace a collection.
type Options struct {
	Batch  int           // rows per statement (0 = DefaultBatch)
	Pause  time.Duration // between batches (0 = DefaultPause; < 0 = none)
	DryRun bool          // count, delete nothing
}

// Cutoffs turns retention periods into instants before now (a zero period
// keeps that kind forever: a zero instant).
func Cutoffs(r config.Retention, now time.Time) store.Cutoffs {
	at := func(d time.Duration) time.Time {
		if d <= 0 {
			return time.Time{}
		}
		return now.Add(-d)
	}
	return store.Cutoffs{Events: at(r.Events), Runs: at(r.Runs), Logs: at(r.Logs)}
}

// Collect prunes what r allows as of now and reports it. With DryRun it
// only counts (the log bytes are those of the files that would go). A
// collection that fails part-way reports what it did and the error.
func Collect(ctx context.Context, p store.Pruner, r config.Retention, now time.Time, o Options) (store.GCReport, error) {
	start := time.Now()
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Pause == 0 {
		o.Pause = DefaultPause
	}
	cut := Cutoffs(r, now)
	rep := store.GCReport{At: now.UTC(), DryRun: o.DryRun}
	var err error
	if o.DryRun {
		err = dryRun(ctx, p, cut, &rep)
	} else {
		err = collect(ctx, p, cut, o, &rep)
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		rep.Error = err.Error()
	}
	return rep, err
}

func dryRun(ctx context.Context, p store.Pruner, cut store.Cutoffs, rep *store.GCReport) error {
	n, err := p.CountPrunable(ctx, cut)
	if err != nil {
		return err
	}
	rep.Events, rep.Outbox, rep.Comments, rep.Runs, rep.Logs = n.Events, n.Outbox, n.Comments, n.Runs, n.Logs
	// The bytes of the logs that would go: those of old runs and old logs.
	seen := map[string]bool{}
	for _, c := range []time.Time{cut.Runs, cut.Logs} {
		if c.IsZero() {
			continue
		}
		runs, err := p.OldRuns(ctx, c, true, 1<<30)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if !seen[r.ID] {
				seen[r.ID] = true
				rep.LogBytes += fileSize(r.LogPath)
			}
		}
	}
	return nil
}

func collect(ctx context.Context, p store.Pruner, cut store.Cutoffs, o Options, rep *store.GCReport) error {
	pause := func() error {
		if o.Pause < 0 {
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Pause):
			return nil
		}
	}
	var logErr error // the first log file that could not be removed
	// Old logs first (the run rows stay), then old runs with theirs.
	for _, step := range []struct {
		before  time.Time
		withLog bool
	}{{cut.Logs, true}, {cut.Runs, false}} {
		if step.before.IsZero() {
			continue
		}
		for {
			runs, err := p.OldRuns(ctx, step.before, step.withLog, o.Batch)
			if err != nil || len(runs) == 0 {
				if err != nil {
					return err
				}
				break
			}
			ids := make([]string, len(runs))
			for i, r := range runs {
				ids[i] = r.ID
				if r.LogPath != "" {
					// A file that cannot be removed is reported, not retried
					// for ever: its run forgets it like the others.
					size, err := removeLog(r.LogPath)
					if err != nil && logErr == nil {
						logErr = err
					}
					if err == nil && size >= 0 {
						rep.Logs++
						rep.LogBytes += size
					}
				}
			}
			if step.withLog {
				err = p.ForgetLogs(ctx, ids)
			} else {
				var n int
				n, err = p.DeleteRuns(ctx, ids, step.before)
				rep.Runs += n
			}
			if err != nil {
				return err
			}
			if err := pause(); err != nil {
				return err
			}
		}
	}
	if !cut.Events.IsZero() {
		for _, prune := range []struct {
			n  *int
			fn func(context.Context, time.Time, int) (int, error)
		}{{&rep.Events, p.PruneEvents}, {&rep.Outbox, p.PruneOutbox}} {
			for {
				n, err := prune.fn(ctx, cut.Events, o.Batch)
				*prune.n += n
				if err != nil {
					return err
				}
				if n == 0 {
					break
				}
				if err := pause(); err != nil {
					return err
				}
			}
		}
	}
	if !cut.Events.IsZero() {
		// Agents' comments go with the events, a window of the comments at a
		// time (people's comments are kept).
		for after := ""; ; {
			n, next, done, err := p.PruneAgentComments(ctx, cut.Events, after, o.Batch)
			rep.Comments += n
			if err != nil {
				return err
			}
			if done {
				break
			}
			after = next
			if err := pause(); err != nil {
				return err
			}
		}
	}
	return logErr
}

// removeLog removes a run's log file and returns its size (-1 when it was
// already gone: nothing to count).
func removeLog(path string) (int64, error) {
	size := fileSize(path)
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return -1, nil
		}
		return 0, err
	}
	return size, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
