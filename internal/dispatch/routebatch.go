package dispatch

import (
	"context"
	"errors"
	"sync"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// routeBatchSize bounds the routings written in one transaction.
const routeBatchSize = 50

// routeAll routes many runs at once (the runs of a dead node, taken back
// together): the facts of each are read concurrently, the decisions made
// one after another under the router's lock, and the changes written in
// transactions of up to routeBatchSize (each change in a savepoint of its
// own, so one whose guard fails is refused alone). A routing the batch
// could not write (a guard refused it, a read failed, the store failed) is
// routed on its own by route, which reads and decides again; what route
// does for a run, routeAll does, in fewer commits. Each commit of a change
// with events takes the store's event-order lock once, so a thousand runs
// taken back one transaction each waited on a thousand commits.
func (r *router) routeAll(ctx context.Context, reqs []routeReq) error {
	var first error
	for len(reqs) > 0 {
		n := min(routeBatchSize, len(reqs))
		if err := r.routeBatch(ctx, reqs[:n]); err != nil && first == nil {
			first = err
		}
		reqs = reqs[n:]
	}
	return first
}

func (r *router) routeBatch(ctx context.Context, reqs []routeReq) error {
	facts := make([]routeFacts, len(reqs))
	readErr := make([]error, len(reqs))
	env := r.env()
	var wg sync.WaitGroup
	sem := make(chan struct{}, recoverWorkers)
	for i := range reqs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			facts[i], readErr[i] = readRoute(ctx, r.st, env.cfg.Policy, reqs[i], env.now)
		}()
	}
	wg.Wait()

	var alone []routeReq // routed one by one, after the batch
	r.mu.Lock()
	env = r.env()
	var ws []routing
	var at []int
	for i, req := range reqs {
		if readErr[i] != nil {
			alone = append(alone, req)
			continue
		}
		w, err := decideRoute(env, req, facts[i])
		switch {
		case errors.Is(err, errRouted):
			r.onPath(PathLost)
			continue
		case errors.Is(err, errRenewed):
			r.onPath(PathRenewed)
			continue
		case err != nil:
			alone = append(alone, req)
			continue
		}
		for _, n := range w.notices {
			w.ch.Outbox = append(w.ch.Outbox, r.rows(w.cfg, n)...)
		}
		ws, at = append(ws, w), append(at, i)
	}
	chs := make([]store.Change, len(ws))
	for k := range ws {
		chs[k] = ws[k].ch
	}
	refused, err := r.st.ApplyAll(ctx, chs)
	r.mu.Unlock()
	for k, w := range ws {
		switch {
		case err != nil || refused[k] != nil:
			alone = append(alone, reqs[at[k]])
		default:
			rctx, sp := tracing.Start(tracing.RunContext(ctx, w.run.ID), tracing.SpanRoute, tracing.Recovered(reqs[at[k]].recovering))
			r.routed(rctx, w)
			r.onPath(w.path)
			tracing.End(sp, nil)
		}
	}
	var first error
	for _, req := range alone {
		if err := r.route(tracing.RunContext(ctx, req.run.ID), req); err != nil && first == nil {
			first = err
		}
	}
	return first
}
