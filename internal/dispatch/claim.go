package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
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
	problems := inputProblems(d.cfg.Load(), c, profile)
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
	d.routes.blockInvalid(ctx, c, strings.Join(where, ", "), "the card's input does not fit agent profile "+profile+": "+strings.Join(problems, "; "),
		fmt.Sprintf("drover card edit %s --spec-file FILE (fix %s), then drover card resume %s", c.Identifier, strings.Join(where, ", "), c.Identifier))
	return true
}

// inputProblems is what in the card's input does not fit profile: its
// spec_schema, its kind's own spec check, the prompt's variables.
func inputProblems(cfg *config.Config, c board.Card, profile string) []string {
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
	return problems
}

// claimAndStart claims one card and starts its agent (claimAll of one).
func (d *Dispatcher) claimAndStart(ctx context.Context, c board.Card, profile string, probe bool) error {
	refused, err := d.claimAll(ctx, []claimReq{{card: c, profile: profile, probe: probe}})
	if err != nil {
		return err
	}
	return refused[0]
}

// claimReq is a card offer chose to claim, with its profile, whether its
// run is the profile's breaker probe, and why it runs on that profile when
// it is a fallback.
type claimReq struct {
	card    board.Card
	profile string
	probe   bool
	why     string // why profile is not the card's own (a fallback: choose), "" when it is
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
	attempts, err := nextAttempts(ctx, d.o.Store, reqs)
	if err != nil {
		return nil, err
	}
	now := d.o.Now().UTC()
	ps := make([]pendingClaim, len(reqs))
	for i, r := range reqs {
		ps[i] = newClaim(r, attempts[i], running.Name, d.node, now, now.Add(d.lease()))
		ps[i].run.Basis = basisOf(cfg, r.card, r.profile)
		ps[i].tctx, ps[i].root = tracing.StartRun(context.Background(), r.card, *ps[i].run)
		_, ps[i].csp = tracing.Start(ps[i].tctx, tracing.SpanClaim)
		d.claims.note(r.card.ID, ps[i].next.Claim.Epoch)
	}
	refused, err = d.writeClaims(ctx, reqs, ps, now)
	if err != nil {
		for i := range ps {
			tracing.End(ps[i].csp, err)
			tracing.End(ps[i].root, err)
		}
		return nil, err
	}
	for i, r := range reqs {
		tracing.End(ps[i].csp, refused[i])
		if refused[i] != nil {
			tracing.End(ps[i].root, refused[i])
			continue
		}
		d.startClaimed(r, ps[i])
	}
	return refused, nil
}

// pendingClaim is one claim's change, before it is written.
type pendingClaim struct {
	next      board.Card
	run       *board.Run
	ch        store.Change
	tctx      context.Context
	root, csp tracing.Span
}

// newClaim is the claim of r's card by node: a compare-and-set on the
// card's version that moves it to the running column with the claim
// (owner, fencing epoch = the version it creates, lease), inserts the run
// of attempt number attempt, and its claimed event.
func newClaim(r claimReq, attempt int, running, node string, now, leaseUntil time.Time) pendingClaim {
	c, epoch := r.card, r.card.RetryEpoch
	p := pendingClaim{next: c}
	p.next.Claim = &board.Claim{Owner: node, Epoch: c.Version + 1, LeaseUntil: leaseUntil}
	p.next.State = running
	p.next.StateReason = fmt.Sprintf("attempt %d running on %s", attempt, node)
	data := map[string]any{"attempt": attempt, "from": c.State, "probe": r.probe, "agent": r.profile}
	if r.why != "" {
		p.next.StateReason += " as " + r.profile + ": " + r.why
		data["fallback"] = r.why
	}
	p.next.NextAttemptAt = nil
	p.run = &board.Run{ID: board.NewID(), CardID: c.ID, Attempt: attempt, RetryEpoch: epoch, ClaimEpoch: p.next.Claim.Epoch,
		Node: node, Agent: r.profile, ClaimedAt: now}
	p.ch = store.Change{NewRun: p.run, Events: []board.Event{{At: now, CardID: c.ID, RunID: p.run.ID, Type: board.EvClaimed,
		Actor: actorOf(node), Reason: fmt.Sprintf("attempt %d (retry epoch %d) claimed by %s", attempt, epoch, node),
		Data: jsonOf(data)}}}
	if r.why != "" {
		p.ch.Events[0].Reason += " on " + r.profile + ": " + r.why
	}
	return p
}

// writeClaims writes the claims in one store transaction. The tick read the
// breakers before this claim; a routing since may have opened (or paused)
// the profile. They are read again under routeMu, which every breaker write
// in this process holds, so no run starts past an open breaker (across
// processes the breaker row's version guards the write); a probe claim
// marks the breaker's probe in the same change.
func (d *Dispatcher) writeClaims(ctx context.Context, reqs []claimReq, ps []pendingClaim, now time.Time) ([]error, error) {
	refused := make([]error, len(reqs))
	d.routeMu.Lock()
	defer d.routeMu.Unlock()
	bs, err := readBreakers(ctx, d.o.Store)
	if err != nil {
		return nil, err
	}
	var chs []store.Change
	var idx []int
	for i, r := range reqs {
		b := bs[r.profile]
		if ok, isProbe, _ := policy.Allow(b.BreakerState, now); !ok || isProbe != r.probe {
			refused[i] = store.ErrConflict // the next tick sees the breaker as it is now
			continue
		}
		ch := ps[i].ch
		ch.Card = &ps[i].next
		if r.probe {
			ch.AgentState = agentState(r.profile, policy.StartProbe(b.BreakerState, policy.CardRef{ID: r.card.ID, Identifier: r.card.Identifier}), b.version, now)
		}
		if n, capped := d.cfg.Load().Agents.MaxConcurrent[r.profile]; capped {
			ch.LiveCap = &store.LiveCap{Agent: r.profile, Max: n}
		}
		chs, idx = append(chs, ch), append(idx, i)
	}
	if len(chs) == 0 {
		return refused, nil
	}
	got, err := d.o.Store.ApplyAll(ctx, chs)
	if err != nil {
		return nil, err
	}
	for k, e := range got {
		refused[idx[k]] = e
	}
	return refused, nil
}

// startClaimed starts the agent of a written claim.
func (d *Dispatcher) startClaimed(r claimReq, p pendingClaim) {
	// What the store holds now: the claim's write made the next version.
	claimed := p.next
	claimed.Version = r.card.Version + 1
	eligibleSince := r.card.UpdatedAt
	if r.card.NextAttemptAt != nil && r.card.NextAttemptAt.After(eligibleSince) {
		eligibleSince = *r.card.NextAttemptAt
	}
	if d.startHook != nil && !d.startHook(claimed, *p.run) {
		p.root.End()
		return
	}
	d.start(p.tctx, claimed, *p.run, r.profile, r.card.State, eligibleSince)
}

// nextAttempts is, for each card, one more than the highest attempt stored
// for its retry epoch (the store's unique key refuses a claim that raced
// another to the same number), read for all the cards in one query.
func nextAttempts(ctx context.Context, st store.Store, reqs []claimReq) ([]int, error) {
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = r.card.ID
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{CardIDs: ids})
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

// claimLog remembers the claims this process is about to write, so that a
// write whose reply is lost is still known as ours.
type claimLog struct {
	mu     sync.Mutex
	epochs map[string]int64 // card → fencing epoch of the last claim written
}

func (l *claimLog) note(cardID string, epoch int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epochs == nil || len(l.epochs) > 10000 {
		l.epochs = map[string]int64{}
	}
	l.epochs[cardID] = epoch
}

func (l *claimLog) wrote(cardID string, epoch int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epochs[cardID] == epoch
}
