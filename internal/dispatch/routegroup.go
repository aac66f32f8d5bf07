package dispatch

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// Group routing. Runs that finish while another routing is being written
// queue up (combiner), and the next routing writes all of them in one store
// transaction (store.ApplyAll): a commit per group instead of a commit per
// run. Each run's routing is still its own all-or-nothing change with its
// own guards (the claim's owner and epoch, "the run has no outcome yet",
// the card's version), decided exactly as routeOnce decides it; a change
// the store refuses is routed again on its own by routeOnce, which reads
// the card again and decides again, so a refused card never costs the
// others their routing and is never lost.

// routeReq is one finished run waiting for its routing.
type routeReq struct {
	ctx    context.Context
	cardID string
	claim  board.Claim
	run    board.Run
	cls    policy.Classification
	res    *agent.Result
}

// maxRouteGroup bounds one group's transaction.
const maxRouteGroup = 200

// routeGrouped routes a finished run as part of a group; its result is
// routeOnce's. The simulation (Options.Spawn) routes one run at a time
// with routeOnce, in the order its seeded schedule says.
func (d *Dispatcher) routeGrouped(ctx context.Context, cardID string, claim board.Claim, run board.Run, cls policy.Classification, res *agent.Result) error {
	if d.o.Spawn != nil {
		return d.routeOnce(ctx, cardID, claim, run, cls, res, false)
	}
	req := &routeReq{ctx: ctx, cardID: cardID, claim: claim, run: run, cls: cls, res: res}
	return d.routes.do(req, maxRouteGroup, d.routeGroupOnce)
}

// routeGroupOnce decides every run of group and writes their routings in
// one transaction, then answers each run.
func (d *Dispatcher) routeGroupOnce(queued []*routeReq) []error {
	results := make([]error, len(queued))
	at := make(map[*routeReq]int, len(queued))
	for i, q := range queued {
		at[q] = i
	}
	// In card id order, as claims are: concurrent batches lock rows in one
	// order (and a card's routings are never in one group twice).
	group := append([]*routeReq(nil), queued...)
	sort.SliceStable(group, func(a, b int) bool { return group[a].cardID < group[b].cardID })
	type prepared struct {
		req *routeReq
		r   *routing
		sp  tracing.Span
	}
	var ps []prepared
	var alone []*routeReq // routed on their own, after the group
	answer := func(q *routeReq, sp tracing.Span, err error) {
		tracing.End(sp, err)
		results[at[q]] = err
	}
	d.routeMu.Lock()
	ids := make([]string, 0, len(group))
	for _, q := range group {
		ids = append(ids, q.cardID)
	}
	rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	bs, err := d.breakers(rctx)
	var in *routeInputs
	if err == nil {
		in, err = loadRouteInputs(rctx, d.o.Store, ids)
	}
	cancel()
	if err != nil {
		d.routeMu.Unlock()
		for _, q := range group {
			results[at[q]] = d.routeOnce(q.ctx, q.cardID, q.claim, q.run, q.cls, q.res, false)
		}
		return results
	}
	// A routing that writes a profile's breaker changes what the routings
	// after it would decide for that profile (a tripped breaker, a probe's
	// result): those go on their own, after the group, reading the breaker
	// as it is then.
	breakerWritten := map[string]bool{}
	for _, q := range group {
		if breakerWritten[q.run.Agent] {
			alone = append(alone, q)
			continue
		}
		ctx, sp := tracing.Start(q.ctx, tracing.SpanRoute, tracing.Recovered(false))
		r, err := d.prepareRoute(ctx, q.cardID, q.claim, q.run, q.cls, q.res, false, bs, in)
		switch {
		case errors.Is(err, errRouted), errors.Is(err, errRenewed):
			answer(q, sp, nil)
		case err != nil:
			tracing.End(sp, err) // this try failed; routeOnce tries again with a span of its own
			alone = append(alone, q)
		default:
			if r.ch.AgentState != nil {
				breakerWritten[r.ch.AgentState.Name] = true
			}
			ps = append(ps, prepared{req: q, r: r, sp: sp})
		}
	}
	chs := make([]store.Change, len(ps))
	for i, p := range ps {
		chs[i] = p.r.ch
	}
	var refused []error
	if len(chs) > 0 {
		actx, cancel := context.WithTimeout(context.Background(), time.Minute)
		refused, err = d.o.Store.ApplyAll(actx, chs)
		cancel()
	}
	d.routeMu.Unlock()
	for i, p := range ps {
		switch {
		case err == nil && refused[i] == nil:
			p.r.written(true)
			answer(p.req, p.sp, nil)
		case err == nil && p.r.lost && errors.Is(refused[i], store.ErrConflict):
			answer(p.req, p.sp, nil) // routed by someone else
		default:
			// Nothing of it was written: decided again, alone (an
			// unavailable store is retried there with backoff).
			why := err
			if why == nil {
				why = refused[i]
			}
			tracing.End(p.sp, why)
			alone = append(alone, p.req)
		}
	}
	for _, q := range alone {
		results[at[q]] = d.routeOnce(q.ctx, q.cardID, q.claim, q.run, q.cls, q.res, false)
	}
	return results
}
