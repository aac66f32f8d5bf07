package dispatch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/budget"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Tick is one pass: reload config, recover dead owners' claims, reconcile
// live runs with the board, and start what is eligible. It returns the
// earliest time something becomes due (zero when nothing is scheduled).
func (d *Dispatcher) Tick(ctx context.Context) time.Time { return d.tickPass(ctx, true) }

// fullEvery bounds how long Run goes without a full pass while wake-ups
// (store changes, finished runs) keep it busy with light ones.
const fullEvery = time.Second

// tickPass is a full pass (Tick) or a light one: a light pass only starts
// what is eligible. Run makes the passes that store changes and finished runs
// wake it for light, and a full one at least every fullEvery: with hundreds
// of live runs, each commit of their progress wakes the node, and reading
// every claimed card, renewing the leader's and the node's rows and
// re-reading the config on each of those wake-ups cost most of a core.
// What the full pass does is time-driven (expired leases, the node's own
// lease) or rare (an operator moving a running card: that run stops within
// fullEvery), so it waits that long at most.
func (d *Dispatcher) tickPass(ctx context.Context, full bool) time.Time {
	if !d.self.isRegistered() && ctx.Err() == nil {
		// A harness driving Tick without Run takes the name here, by the
		// same rules. Nothing is dispatched under a name not yet held (a
		// store error is retried on the next tick).
		if err := d.self.register(ctx, d.Running()); err != nil {
			if errors.Is(err, ErrNodeTaken) {
				d.self.lose(err)
			}
			d.log.Warn("could not take the node name yet", "err", err)
			return time.Time{}
		}
	}
	if d.self.lost() != nil {
		return time.Time{} // Run stops; nothing more is claimed under the name
	}
	start := time.Now()
	var next time.Time
	var err error
	if full {
		d.reload(ctx)
		next, err = d.tick(ctx)
		d.lastFull, d.fullNext = start, next
	} else {
		next, err = d.dispatch(ctx, d.o.Now())
		if !d.fullNext.IsZero() && (next.IsZero() || d.fullNext.Before(next)) {
			next = d.fullNext // a lease the last full pass waits for
		}
		if due := d.o.Now().Add(fullEvery - time.Since(d.lastFull)); next.IsZero() || due.Before(next) {
			next = due
		}
	}
	d.self.passed(err, d.o.Now(), ctx.Err() != nil)
	if !full {
		if d.o.Metrics != nil {
			d.o.Metrics.ObserveTick(time.Since(start))
		}
		return next
	}
	if err := d.self.touch(ctx, d.Running(), false, ""); errors.Is(err, store.ErrNodeHeld) {
		// Another process took the name after this one's hold lapsed (the
		// store was out of reach for longer than a lease): two processes
		// must never dispatch under one name, so this one stops.
		d.log.Error("another process took this node's name; stopping", "err", err)
		d.self.lose(errors.Join(ErrNodeTaken, fmt.Errorf("node name %s was taken by another drover serve while this one could not renew its hold; this process stopped. Give each process its own dispatch.node", d.node)))
	} else if err != nil && ctx.Err() == nil {
		d.log.Warn("could not record node status", "err", err)
	}
	if d.o.Metrics != nil {
		d.o.Metrics.ObserveTick(time.Since(start))
	}
	return next
}

func (d *Dispatcher) tick(ctx context.Context) (time.Time, error) {
	now := d.o.Now()
	lead, err := d.o.Store.TryLead(ctx, d.node, d.LeaderTTL())
	if err != nil {
		return time.Time{}, err
	}
	// One read of the claimed cards serves recovery (others' leases) and
	// reconciliation (this node's runs), instead of a read per live run.
	claimed, err := d.o.Store.ListCards(ctx, store.CardFilter{Claimed: store.Bool(true)})
	if err != nil {
		return time.Time{}, err
	}
	expiry, err := d.recover(ctx, now, lead, claimed)
	if err != nil {
		return time.Time{}, err
	}
	d.reconcile(claimed)
	if err := d.pauseUnsandboxable(ctx, d.cfg.Load()); err != nil && ctx.Err() == nil {
		d.log.Warn("could not pause a profile whose sandbox cannot start", "err", err)
	}
	d.sweep.run(ctx, d.o.Store, d.cfg.Load(), d.log, d.o.SandboxHomes, d.jobs.has)
	next, err := d.dispatch(ctx, now)
	if !expiry.IsZero() && (next.IsZero() || expiry.Before(next)) {
		next = expiry
	}
	return next, err
}

// resolveCommand makes a relative command path (./agent.sh) relative to the
// WORKFLOW.md it was written in, not to the card's workspace.
func resolveCommand(cfg *config.Config, p agent.Profile) agent.Profile {
	if strings.Contains(p.Command, "/") && !filepath.IsAbs(p.Command) && cfg.Path != "" {
		p.Command = filepath.Join(filepath.Dir(cfg.Path), p.Command)
	}
	return p
}

func (d *Dispatcher) slotsFree(cfg *config.Config) int {
	n := cfg.Dispatch.MaxConcurrent
	if n <= 0 {
		n = 1
	}
	return n - d.Running()
}

func (d *Dispatcher) stateFree(cfg *config.Config, state string) int {
	limit, ok := cfg.Dispatch.MaxConcurrentByState[state]
	if !ok {
		return -1
	}
	n := 0
	for _, j := range d.jobs.snapshot() {
		if j.fromState == state {
			n++
		}
	}
	return limit - n
}

// blockersOf are the cards c waits on (those that still exist).
func blockersOf(ctx context.Context, st store.Store, c board.Card) []board.Card {
	var out []board.Card
	for _, id := range c.BlockedBy {
		if b, err := st.GetCard(ctx, id); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// spendPaused reads the day's budget and says why it pauses dispatch ("" when
// it does not); offer reserves each run it starts on the budget it returns.
func (d *Dispatcher) spendPaused(ctx context.Context, cfg *config.Config, now time.Time) (string, *policy.DayBudget, error) {
	why := ""
	var b *policy.DayBudget
	if cfg.Limits.MaxCostPerDayUSD > 0 {
		got, err := budget.ReadDay(ctx, d.o.Store, cfg.Limits, now)
		if err != nil {
			return "", nil, err
		}
		b = &got
		why = b.Paused(cfg.Limits.DayBoundary.Next(now))
	}
	// Only a capped day is an error an operator sees (dispatch_paused); one
	// run at a time for want of an estimate is not.
	paused := ""
	if b != nil && b.Capped() {
		paused = why
		d.routes.notice(ctx, cfg, "spend_paused", "spend/"+dayKey(b.DayStart)+"/paused", why)
	}
	d.self.update(func(st *NodeStatus) { st.DispatchPaused = paused })
	return why, b, nil
}
