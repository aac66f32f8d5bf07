package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// Causes a dispatcher gives when it stops a run.
var (
	errShutdown  = errors.New("shutdown")
	errLeaseLost = errors.New("lease_lost")
	errCancelled = errors.New("cancel")
	errSpend     = errors.New("spend")
)

// validate checks a card's input before any session opens. An invalid card
// is blocked once with kind invalid_input and true is returned; it is never
// claimed, released or retried until its input changes.
func (d *Dispatcher) validate(ctx context.Context, c board.Card, profile string) bool {
	cfg := d.cfg.Load()
	var problems []string
	if sch := cfg.SpecSchema(profile); sch != nil {
		problems = append(problems, schemaProblems(sch, c.Spec)...)
	}
	p, _ := cfg.Agents.Profile(profile)
	if err := registry.ValidateSpec(p.Kind, c.Spec); err != nil {
		problems = append(problems, err.Error())
	}
	if _, err := cfg.RenderPrompt(c, 1, "", ""); err != nil {
		problems = append(problems, "prompt: "+err.Error())
	}
	if len(problems) == 0 {
		return false
	}
	if len(problems) > 5 {
		problems = append(problems[:5], fmt.Sprintf("… and %d more", len(problems)-5))
	}
	where := make([]string, 0, len(problems))
	for _, p := range problems {
		if i := strings.Index(p, ":"); i > 0 {
			where = append(where, p[:i])
		}
	}
	d.blockInvalid(ctx, c, strings.Join(where, ", "), "the card's input does not fit agent profile "+profile+": "+strings.Join(problems, "; "),
		fmt.Sprintf("drover card edit %s --spec-file FILE (fix %s), then drover card resume %s", c.Identifier, strings.Join(where, ", "), c.Identifier))
	return true
}

// blockInvalid blocks a card for invalid input: one block event, no run,
// no release.
func (d *Dispatcher) blockInvalid(ctx context.Context, c board.Card, where, what, how string) {
	cfg := d.cfg.Load()
	col := cfg.Policy.FailedState
	if r := cfg.Board.RoleOf(col); r != board.RoleBlocked {
		if b, ok := cfg.Board.First(board.RoleBlocked); ok {
			col = b.Name
		}
	}
	now := d.o.Now().UTC()
	reason := &board.BlockReason{Kind: string(policy.KindInvalidInput), What: what, Where: where, How: how}
	next := c
	next.State, next.StateReason, next.BlockReason, next.NextAttemptAt = col, "invalid input: "+excerpt.Clip(what, 300), reason, nil
	ch := store.Change{Card: &next,
		Events:   []board.Event{{At: now, CardID: c.ID, Type: board.EvBlocked, Actor: d.actor(), Reason: next.StateReason, Data: jsonOf(map[string]any{"kind": policy.KindInvalidInput, "where": where})}},
		Comments: []board.Comment{{CardID: c.ID, Author: d.actor(), Body: reasonText(reason), At: now}},
	}
	ch.Outbox = d.outbox(cfg, Notice{Event: policy.NotifyBlocked, Key: c.ID + "/validation/" + fmt.Sprint(c.Version) + "/blocked", Card: next, Reason: reason, At: now})
	if err := d.o.Store.Apply(ctx, ch); err != nil && !errors.Is(err, store.ErrConflict) {
		d.log.Error("could not block a card with invalid input", "card_id", c.ID, "identifier", c.Identifier, "err", err)
		return
	}
	d.log.Warn("blocked: invalid input", "card_id", c.ID, "identifier", c.Identifier, "where", where)
}

// claimAndStart claims one card and starts its agent (claimAll of one).
func (d *Dispatcher) claimAndStart(ctx context.Context, c board.Card, profile string, probe bool) error {
	refused, err := d.claimAll(ctx, []claimReq{{card: c, profile: profile, probe: probe}})
	if err != nil {
		return err
	}
	return refused[0]
}

// claimReq is a card offer chose to claim, with its profile and whether its
// run is the profile's breaker probe.
type claimReq struct {
	card    board.Card
	profile string
	probe   bool
}

// claimAll claims cards in one store transaction (store.ApplyAll) and starts
// an agent for each claim written. Each claim is the same change a claim of
// one card is: a compare-and-set on the card's version that sets the claim
// (owner, fencing epoch = the version it creates, lease), inserts the run
// with the next attempt number of the card's retry epoch (unique in the
// store) and its claimed event; one refused claim (another node took the
// card, it changed) leaves the others written. refused[i] is the error of
// reqs[i] (store.ErrConflict when it was not claimed); err is for the batch
// as a whole, when nothing was claimed.
//
// The changes go in card id order, as every node's do: two nodes' batches
// over the same cards lock their rows in one order and cannot deadlock.
func (d *Dispatcher) claimAll(ctx context.Context, reqs []claimReq) (refused []error, err error) {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].card.ID < reqs[order[b]].card.ID })
	sorted := make([]claimReq, len(reqs))
	for i, o := range order {
		sorted[i] = reqs[o]
	}
	got, err := d.claimSorted(ctx, sorted)
	if err != nil {
		return nil, err
	}
	refused = make([]error, len(reqs))
	for i, o := range order {
		refused[o] = got[i]
	}
	return refused, nil
}

func (d *Dispatcher) claimSorted(ctx context.Context, reqs []claimReq) (refused []error, err error) {
	cfg := d.cfg.Load()
	running, ok := cfg.Board.First(board.RoleRunning)
	if !ok {
		return nil, fmt.Errorf("board has no running column")
	}
	attempts, err := d.nextAttempts(ctx, reqs)
	if err != nil {
		return nil, err
	}
	now := d.o.Now().UTC()
	type pending struct {
		next      board.Card
		run       *board.Run
		ch        store.Change
		tctx      context.Context
		root, csp tracing.Span
	}
	ps := make([]pending, len(reqs))
	for i, r := range reqs {
		c, attempt, epoch := r.card, attempts[i], r.card.RetryEpoch
		next := c
		next.Claim = &board.Claim{Owner: d.node, Epoch: c.Version + 1, LeaseUntil: now.Add(d.lease())}
		next.State = running.Name
		next.StateReason = fmt.Sprintf("attempt %d running on %s", attempt, d.node)
		next.NextAttemptAt = nil
		run := &board.Run{ID: board.NewID(), CardID: c.ID, Attempt: attempt, RetryEpoch: epoch, ClaimEpoch: next.Claim.Epoch,
			Node: d.node, Agent: r.profile, ClaimedAt: now}
		ps[i] = pending{next: next, run: run}
		ps[i].ch = store.Change{Card: &ps[i].next, NewRun: run, Events: []board.Event{{At: now, CardID: c.ID, RunID: run.ID, Type: board.EvClaimed,
			Actor: d.actor(), Reason: fmt.Sprintf("attempt %d (retry epoch %d) claimed by %s", attempt, epoch, d.node),
			Data: jsonOf(map[string]any{"attempt": attempt, "from": c.State, "probe": r.probe})}}}
		ps[i].tctx, ps[i].root = tracing.StartRun(context.Background(), c, *run)
		_, ps[i].csp = tracing.Start(ps[i].tctx, tracing.SpanClaim)
		d.noteClaim(c.ID, next.Claim.Epoch)
	}
	// The tick read the breakers before this claim; a routing since may have
	// opened (or paused) the profile. Re-check under routeMu, which every
	// breaker write in this process holds, so no run starts past an open
	// breaker (across processes the breaker row's version guards the write).
	refused = make([]error, len(reqs))
	d.routeMu.Lock()
	bs, err := d.breakers(ctx)
	var chs []store.Change
	var idx []int
	if err == nil {
		for i, r := range reqs {
			if ok, isProbe, _ := policy.Allow(bs[r.profile].BreakerState, now); !ok || isProbe != r.probe {
				refused[i] = store.ErrConflict // the next tick sees the breaker as it is now
				continue
			} else if r.probe {
				ps[i].ch.AgentState = agentState(r.profile, policy.StartProbe(bs[r.profile].BreakerState, policy.CardRef{ID: r.card.ID, Identifier: r.card.Identifier}), bs[r.profile].version, now)
			}
			chs, idx = append(chs, ps[i].ch), append(idx, i)
		}
		var got []error
		if len(chs) > 0 {
			got, err = d.o.Store.ApplyAll(ctx, chs)
		}
		for k, e := range got {
			refused[idx[k]] = e
		}
	}
	d.routeMu.Unlock()
	if err != nil {
		for i := range ps {
			tracing.End(ps[i].csp, err)
			tracing.End(ps[i].root, err)
		}
		return nil, err
	}
	for i, r := range reqs {
		p := &ps[i]
		tracing.End(p.csp, refused[i])
		if refused[i] != nil {
			tracing.End(p.root, refused[i])
			continue
		}
		// What the store holds now: the claim's write made the next version.
		claimed := p.next
		claimed.Version = r.card.Version + 1
		eligibleSince := r.card.UpdatedAt
		if r.card.NextAttemptAt != nil && r.card.NextAttemptAt.After(eligibleSince) {
			eligibleSince = *r.card.NextAttemptAt
		}
		if d.startHook != nil && !d.startHook(claimed, *p.run) {
			p.root.End()
			continue
		}
		d.start(p.tctx, claimed, *p.run, r.profile, r.card.State, eligibleSince)
	}
	return refused, nil
}

// nextAttempts is, for each card, one more than the highest attempt stored
// for its retry epoch (the store's unique key refuses a claim that raced
// another to the same number), read for all the cards in one query.
func (d *Dispatcher) nextAttempts(ctx context.Context, reqs []claimReq) ([]int, error) {
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = r.card.ID
	}
	runs, err := d.o.Store.ListRuns(ctx, store.RunFilter{CardIDs: ids})
	if err != nil {
		return nil, err
	}
	out := make([]int, len(reqs))
	for i, r := range reqs {
		out[i] = 1
		for _, run := range runs {
			if run.CardID == r.card.ID && run.RetryEpoch == r.card.RetryEpoch && run.Attempt >= out[i] {
				out[i] = run.Attempt + 1
			}
		}
	}
	return out, nil
}

// noteClaim remembers the claim this process is about to write, so that a
// write whose reply is lost is still known as ours.
func (d *Dispatcher) noteClaim(cardID string, epoch int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.claims) > 10000 {
		d.claims = map[string]int64{}
	}
	d.claims[cardID] = epoch
}

func (d *Dispatcher) wroteClaim(cardID string, epoch int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.claims[cardID] == epoch
}

// recoverCard records the open run of a card whose owner is gone as
// interrupted and routes it through the policy (crash-loop guard included).
func (d *Dispatcher) recoverCard(ctx context.Context, c board.Card, mine bool) error {
	runs, err := d.o.Store.ListRuns(ctx, store.RunFilter{CardID: c.ID, Open: store.Bool(true)})
	if err != nil {
		return err
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
		return d.o.Store.Apply(ctx, store.Change{Card: &next, ClaimGuard: c.Claim, LeaseEndedBy: endedBy,
			Events: []board.Event{{CardID: c.ID, Type: board.EvRecovered, Actor: d.actor(), Reason: next.StateReason}}})
	}
	// The run's supervisor took the dead owner's agent tree with it; stop
	// whatever still carries this run's DROVER_RUN_ID, with its descendants.
	if n := proc.KillTagged("DROVER_RUN_ID", open.ID); n > 0 {
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
	// The route joins the run's trace, whoever started it.
	return d.route(tracing.RunContext(ctx, open.ID), routeReq{cardID: c.ID, claim: *c.Claim, run: *open, cls: cls, recovering: true})
}
