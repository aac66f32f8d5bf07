package dispatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// recover takes back claims whose owner stopped renewing them. Any node may
// try (the compare-and-set on the card's version lets exactly one win): the
// leader does it for everyone as soon as a lease ends, every node does it
// for its own past lives at once, and any node does it for a claim whose
// lease ended a whole lease period ago (the leader itself may be the one
// that died, and its successor is not in place yet). It returns when the
// soonest foreign lease ends, so the leader wakes up for it.
func (d *Dispatcher) recover(ctx context.Context, now time.Time, lead bool, cards []board.Card) (time.Time, error) {
	// Judge other nodes' leases only with a store that has worked for a
	// whole lease period: after an outage (a database restart) every lease
	// looks expired, and live owners need a lease period to renew theirs.
	judge := d.self.judges(now)
	var soonest time.Time
	var todo []takeBack
	for _, c := range cards {
		if d.jobs.has(c.ID) {
			continue
		}
		// A claim of ours we hold no job for, last renewed before this process
		// started: a previous life of this node. (A claim renewed since is
		// another live process's under the same name: it waits for its lease.)
		// Also ours: a claim this process wrote whose reply was lost (the
		// store committed, the call failed), so no job was started for it.
		mine := c.Claim.Owner == d.node && (d.self.pastLife(c.Claim.LeaseUntil) || d.claims.wrote(c.ID, c.Claim.Epoch))
		expired := !c.Claim.LeaseUntil.After(now)
		stale := c.Claim.LeaseUntil.Before(now.Add(-d.lease()))
		if mine || (judge && lead && expired) || (judge && stale) {
			todo = append(todo, takeBack{c, mine})
			continue
		}
		// Wake up when this lease ends (the leader recovers it then), or a
		// lease period later (anyone does).
		at := c.Claim.LeaseUntil.Add(10 * time.Millisecond)
		if !lead {
			at = at.Add(d.lease())
		}
		if soonest.IsZero() || at.Before(soonest) {
			soonest = at
		}
	}
	return soonest, d.takeBackAll(ctx, todo)
}

// takeBack is one claim recover takes back.
type takeBack struct {
	card board.Card
	mine bool
}

// recoverWorkers bounds the claims prepared (and their routings' facts
// read) at once: each is a few round trips to the store, independent of
// the others, within the store's pool (8 connections).
const recoverWorkers = 6

// prepareWorkers is recoverWorkers, or 1 under a harness that runs every
// job itself (Options.Spawn): a deterministic simulation's store is called
// from one goroutine at a time, so a seed replays the same story.
func (d *Dispatcher) prepareWorkers() int {
	if d.o.Spawn != nil {
		return 1
	}
	return recoverWorkers
}

// takeBackAll recovers every claim in todo: prepared recoverWorkers at a
// time, then routed together (routeAll: the decisions one by one, the
// writes in a few transactions). A dead node's thousand runs taken back one
// routing at a time took ~19 ms each on PostgreSQL, nearly all of it
// waiting for the store, most of that for a commit each. The first error
// that is not a lost race is returned once all are done.
func (d *Dispatcher) takeBackAll(ctx context.Context, todo []takeBack) error {
	if len(todo) == 1 {
		return notLost(d.recoverCard(ctx, todo[0].card, todo[0].mine))
	}
	var (
		mu    sync.Mutex
		first error
		reqs  []routeReq
		wg    sync.WaitGroup
		next  = make(chan takeBack)
	)
	// One scan of /proc for the leftovers of every run taken back, not one
	// a run: each reads every process's environment.
	tagged := proc.FindTagged(proc.RunTagKey)
	for range min(d.prepareWorkers(), len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				req, ok, err := d.prepareRecovery(ctx, t.card, t.mine, tagged)
				mu.Lock()
				first = cmp.Or(first, notLost(err))
				if err == nil && ok {
					reqs = append(reqs, req)
				}
				mu.Unlock()
			}
		}()
	}
	for _, t := range todo {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		next <- t
	}
	close(next)
	wg.Wait()
	// In card order whatever order the workers finished in: a seed replays,
	// and two nodes batching the same cards lock their rows in one order.
	slices.SortFunc(reqs, func(a, b routeReq) int { return cmp.Compare(a.cardID, b.cardID) })
	return cmp.Or(first, notLost(d.routes.routeAll(ctx, reqs)))
}

// notLost is err, or nil for a lost race (another node took the claim back
// first, or an operator moved the card): nothing to report.
func notLost(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// reconcile stops runs whose card an operator moved away or whose claim this
// node lost; claimed is every claimed card, read in this pass (a run's card
// missing from it is no longer claimed: deleted, released or taken back).
func (d *Dispatcher) reconcile(claimed []board.Card) {
	cfg := d.cfg.Load()
	byID := make(map[string]*board.Card, len(claimed))
	for i := range claimed {
		byID[claimed[i].ID] = &claimed[i]
	}
	for _, j := range d.jobs.snapshot() {
		c, ok := byID[j.card.ID]
		if !ok {
			c = &board.Card{}
		}
		switch {
		case c.Claim == nil || c.Claim.Owner != d.node || c.Claim.Epoch != j.claim.Epoch:
			j.cancel(errLeaseLost)
		default:
			switch cfg.Board.RoleOf(c.State) {
			case board.RoleRunning, board.RoleCompleted:
				// still ours to finish (an agent may move its own card on to
				// review); a move into any sink, done included, stops the run
			case board.RoleCancelled:
				j.cancel(&operatorStop{fmt.Sprintf("an operator cancelled %s", c.Identifier)})
			default:
				j.cancel(&operatorStop{fmt.Sprintf("an operator moved %s to %s", c.Identifier, c.State)})
			}
		}
	}
}

// recoverCard records the open run of a card whose owner is gone as
// interrupted and routes it through the policy (crash-loop guard included).
func (d *Dispatcher) recoverCard(ctx context.Context, c board.Card, mine bool) error {
	req, ok, err := d.prepareRecovery(ctx, c, mine, nil)
	if err != nil || !ok {
		return err
	}
	// The route joins the run's trace, whoever started it.
	return d.routes.route(tracing.RunContext(ctx, req.run.ID), req)
}

// prepareRecovery does what taking back c's claim needs before its run is
// routed: a claim with no run is released here (ok false); else the
// leftovers of the run's processes are stopped and the routing to make is
// returned, its verdict read from the run's log where the agent had
// finished. tagged is a scan of the live processes by run tag taken before
// (nil: the run's leftovers are looked for now).
func (d *Dispatcher) prepareRecovery(ctx context.Context, c board.Card, mine bool, tagged proc.Tagged) (routeReq, bool, error) {
	runs, err := d.o.Store.ListRuns(ctx, store.RunFilter{CardID: c.ID, Open: store.Bool(true)})
	if err != nil {
		return routeReq{}, false, err
	}
	var open *board.Run
	for i := range runs {
		if runs[i].ClaimEpoch == c.Claim.Epoch {
			open = &runs[i]
		}
	}
	why := fmt.Sprintf("the lease of %s expired at %s", c.Claim.Owner, c.Claim.LeaseUntil.UTC().Format(time.RFC3339))
	if mine {
		why = fmt.Sprintf("%s restarted while the run was live", d.node)
	}
	d.log.Warn("recovering a claim", "card_id", c.ID, "identifier", c.Identifier, "owner", c.Claim.Owner, "why", why)
	cls := policy.Classification{Kind: policy.KindInterrupted, Message: "drover stopped mid-run: " + why, Source: "recovery"}
	if open == nil {
		// Claimed but no run row: the claim was written and nothing started.
		next := c
		next.Claim = nil
		cfg := d.cfg.Load()
		if col, ok := cfg.Board.First(board.RoleEligible); ok && cfg.Board.RoleOf(c.State) == board.RoleRunning {
			next.State = col.Name
		}
		next.StateReason = "recovered: " + why
		var endedBy *time.Time
		if !mine {
			now := d.o.Now()
			endedBy = &now
		}
		return routeReq{}, false, d.o.Store.Apply(ctx, store.Change{Card: &next, ClaimGuard: c.Claim, LeaseEndedBy: endedBy,
			Events: []board.Event{{CardID: c.ID, Type: board.EvRecovered, Actor: actorOf(d.node), Reason: next.StateReason}}})
	}
	// The run's supervisor took the dead owner's agent tree with it; stop
	// whatever still carries this run's DROVER_RUN_ID, with its descendants.
	if tagged == nil {
		tagged = proc.FindTagged(proc.RunTagKey)
	}
	if n := tagged.Kill(proc.RunTagKey, open.ID); n > 0 {
		d.log.Warn("stopped processes left over from the interrupted run", "card_id", c.ID, "identifier", c.Identifier, "run_id", open.ID, "processes", n)
	}
	// The agent may have finished before its owner died: its log then says
	// how, and the run is routed as it would have been.
	cfg := d.cfg.Load()
	p, _ := cfg.Agents.Profile(open.Agent)
	if got, ok := classifyFromLog(open.LogPath, p.Kind, p.Match, d.o.Now()); ok {
		d.log.Info("recovered a finished run from its log", "card_id", c.ID, "identifier", c.Identifier, "run_id", open.ID, "kind", got.Kind)
		cls = got
	}
	if len(cfg.VerifyFor(open.Agent).Commands) > 0 {
		cls = unverified(cls, open.Report)
	}
	return routeReq{cardID: c.ID, claim: *c.Claim, run: *open, cls: cls, recovering: true}, true, nil
}

// unverified is the verdict on a recovered run of a profile with a verify
// step: its checks never ran, so a run that would be done (a clean exit, or
// the agent's drover_done, whatever its exit) is not; it is retried as
// interrupted. Other verdicts stand.
func unverified(cls policy.Classification, rep *board.AgentReport) policy.Classification {
	if policy.ApplyReport(cls, rep).Kind != policy.KindSucceeded && cls.Kind != policy.KindInterrupted {
		return cls
	}
	return policy.Classification{Kind: policy.KindInterrupted, Source: policy.UnverifiedSource,
		Message: "drover stopped before the verify step ran: " + nonEmpty(cls.Message, "the agent had exited cleanly")}
}
