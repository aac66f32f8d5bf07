package dispatch

import (
	"context"
	"errors"
	"sync"

	"github.com/drover-dev/drover/internal/policy"
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
		first = keepFirst(first, r.routeBatch(ctx, reqs[:n]))
		reqs = reqs[n:]
	}
	return first
}

// keepFirst is the error to report of two: the first that is not a lost
// race (a conflict still standing after its retries), else the first.
func keepFirst(first, err error) error {
	switch {
	case err == nil:
		return first
	case first == nil || (errors.Is(first, store.ErrConflict) && !errors.Is(err, store.ErrConflict)):
		return err
	}
	return first
}

// alone says whether a routing must be decided with every earlier one
// written: a counted failure with an informative fingerprint may complete
// a hold (policy.correlation), which reads its peers' runs, and in a batch
// those peers are read before any of them is written.
func alone(req routeReq, f routeFacts) bool {
	cls, fp := failureOf(req, f.stored)
	return policy.Informative(fp) && policy.Spec(cls.Kind).Counts
}

func (r *router) routeBatch(ctx context.Context, reqs []routeReq) error {
	facts := make([]routeFacts, len(reqs))
	readErr := make([]error, len(reqs))
	env := r.env()
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, r.workers))
	for i := range reqs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			facts[i], readErr[i] = readRoute(ctx, r.st, env.cfg.Policy, reqs[i], env.now)
		}()
	}
	wg.Wait()

	var single []routeReq // routed one by one, after the batch
	r.mu.Lock()
	env = r.env()
	var ws []routing
	var at []int
	for i, req := range reqs {
		if readErr[i] != nil || alone(req, facts[i]) {
			single = append(single, req)
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
			single = append(single, req)
			continue
		}
		r.queueNotices(&w)
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
		case err == nil && refused[k] != nil && w.lost && errors.Is(refused[k], store.ErrConflict):
			// Only the run was to be written, and it has an outcome:
			// someone else routed it (as try counts it).
			r.count(w.run)
			r.onPath(PathLost)
		case err != nil || refused[k] != nil:
			req := reqs[at[k]]
			if err != nil {
				// A batch whose commit failed may have committed all the
				// same: routed alone, the run found as w wrote it is w's.
				req.pending = &ws[k]
			}
			single = append(single, req)
		default:
			rctx, sp := tracing.Start(tracing.RunContext(ctx, w.run.ID), tracing.SpanRoute, tracing.Recovered(reqs[at[k]].recovering))
			r.routed(rctx, w)
			r.onPath(w.path)
			tracing.End(sp, nil)
		}
	}
	var first error
	for _, req := range single {
		first = keepFirst(first, r.route(tracing.RunContext(ctx, req.run.ID), req))
	}
	return first
}
