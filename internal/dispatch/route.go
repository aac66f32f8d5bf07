package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// Routing a finished run is three steps: read what the store holds
// (readRoute), decide the one change to write (decideRoute, pure: see
// routedecide.go), and once it is written, its effects (routed: traces,
// metrics, the log line, the workspace's cleanup). route drives them,
// retrying while the store is away or an operator changed the card.

// routeReq is one finished run on its way to a state: what its job (or a
// recovery) knows once the agent is done.
type routeReq struct {
	cardID string
	claim  board.Claim // the claim the run was started under
	run    board.Run   // the run as its job knew it
	cls    policy.Classification
	res    *agent.Result // the agent's result; nil for a recovered run
	// recovering: the run is another owner's (or a past life's) whose
	// lease ended, routed by whoever recovers it.
	recovering bool
}

var (
	errRouted  = errors.New("already routed")
	errRenewed = errors.New("the owner renewed its lease: not recovered")
)

// route writes a finished run's outcome in one transaction, guarded by the
// claim (owner, epoch) and by "this run has no outcome yet". It reads and
// decides again when an operator changed the card meanwhile, retries while
// the store is unreachable, and stops without error when the run was routed
// by someone else or its owner renewed the lease (a recovery that lost).
func (d *Dispatcher) route(ctx context.Context, req routeReq) (err error) {
	ctx, sp := tracing.Start(ctx, tracing.SpanRoute, tracing.Recovered(req.recovering))
	defer func() { tracing.End(sp, err) }()
	backoff := 200 * time.Millisecond
	for conflicts := 0; ; {
		r, err := d.routeTry(ctx, req)
		switch {
		case err == nil:
			d.routed(ctx, r)
			return nil
		case errors.Is(err, errRouted), errors.Is(err, errRenewed):
			return nil
		case errors.Is(err, store.ErrConflict):
			// The card moved on meanwhile: read it again and decide again.
			// Each retry sees a newer version, so this ends; the bound is a
			// guard against a store that keeps refusing for another reason.
			if conflicts++; conflicts > 50 {
				return fmt.Errorf("routing run %s: still conflicting after %d tries: %w", req.run.ID, conflicts, err)
			}
		case errors.Is(err, store.ErrUnavailable) && ctx.Err() == nil:
			d.log.Warn("store unavailable while routing; retrying", "run_id", req.run.ID, "err", err)
			select {
			case <-ctx.Done():
				return err
			case <-d.o.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		default:
			return err
		}
	}
}

// routeTry reads, decides and writes one routing. One routing at a time in
// this process: the decision reads the profile's breaker and the change
// writes it back. The breaker row's version makes a lost update impossible
// across processes; the lock keeps this process's routings from retrying
// against each other.
func (d *Dispatcher) routeTry(ctx context.Context, req routeReq) (routing, error) {
	d.routeMu.Lock()
	defer d.routeMu.Unlock()
	f, err := readRoute(ctx, d.o.Store, req)
	if err != nil {
		return routing{}, err
	}
	r, err := decideRoute(d.routeEnv(), req, f)
	if err != nil {
		return r, err
	}
	for _, n := range r.notices {
		r.ch.Outbox = append(r.ch.Outbox, d.outbox(r.cfg, n)...)
	}
	err = d.o.Store.Apply(ctx, r.ch)
	if err != nil && r.lost && errors.Is(err, store.ErrConflict) {
		// Only the run was to be written, and it has an outcome: someone
		// else routed it. Its metrics count it here once all the same.
		d.count(r.run)
		return r, errRouted
	}
	return r, err
}

// routeFacts is what routing reads from the store for one request.
type routeFacts struct {
	card     board.Card
	stored   board.Run   // the run as stored: the agent's report is on it
	history  []board.Run // every run of the card's current retry epoch
	breakers map[string]breaker
}

// readRoute reads the card, its run as stored, the runs of its current
// retry epoch and the profiles' breakers.
func readRoute(ctx context.Context, st store.Store, req routeReq) (routeFacts, error) {
	var f routeFacts
	var err error
	if f.card, err = st.GetCard(ctx, req.cardID); err != nil {
		return f, err
	}
	if f.stored, err = st.GetRun(ctx, req.run.ID); err != nil {
		return f, err
	}
	epoch := f.card.RetryEpoch
	if f.history, err = st.ListRuns(ctx, store.RunFilter{CardID: req.cardID, RetryEpoch: &epoch}); err != nil {
		return f, err
	}
	f.breakers, err = readBreakers(ctx, st)
	return f, err
}

// routed does what follows a written routing: its trace, metrics and log
// line, and the workspace's cleanup once the card is in a sink.
func (d *Dispatcher) routed(ctx context.Context, r routing) {
	tracing.Routed(ctx, r.run.Outcome, r.run.Kind, string(r.verb), r.next.State, r.run.Decision)
	d.count(r.run)
	if r.lost {
		return
	}
	d.log.Info("run finished", "card_id", r.next.ID, "identifier", r.next.Identifier, "run_id", r.run.ID, "attempt", r.run.Attempt,
		"outcome", r.run.Outcome, "kind", r.run.Kind, "counted", r.run.Counted, "verb", r.verb, "state", r.next.State, "why", r.run.Decision)
	if r.run.Workspace != "" && removesWorkspace(r.cfg, r.next) {
		d.removeWorkspace(r.cfg, r.next, r.run.Workspace)
	}
}

// routeEnv is what a decision takes from this dispatcher besides the
// store's facts: the config in force, the clock, randomness, and who acts.
func (d *Dispatcher) routeEnv() routeEnv {
	return routeEnv{cfg: d.cfg.Load(), now: d.o.Now().UTC(), rand: d.o.Rand, node: d.node}
}

func (d *Dispatcher) count(r board.Run) {
	if d.o.Metrics != nil {
		d.o.Metrics.ObserveRun(r)
	}
}

func (d *Dispatcher) actor() string { return actorOf(d.node) }

func actorOf(node string) string { return "dispatcher:" + node }
