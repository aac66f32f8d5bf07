package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
)

// Routing a finished run is three steps: read what the store holds
// (readRoute), decide the one change to write (decideRoute, pure: see
// routedecide.go), and once it is written, its effects (routed: traces,
// metrics, the log line, the workspace's cleanup). route drives them,
// retrying while the store is away or an operator changed the card.

// router writes a card's way forward outside its claim: a finished run's
// routing (route), a block before any claim (block.go), and notices about
// no run. It holds the breaker lock that claims share (the breaker is read
// and written under it).
type router struct {
	st      store.Store
	config  func() *config.Config
	outbox  func(*config.Config, Notice) []store.OutboxItem // nil: no notifications
	metrics Metrics                                         // nil: none
	log     *slog.Logger
	node    string
	now     func() time.Time
	rand    func() float64
	after   func(time.Duration) <-chan time.Time
	mu      *sync.Mutex
	onRoute func(path string) // nil: none (Options.OnRoute)
	homes   string            // the cards' sandbox homes (Options.SandboxHomes)
	// workers bounds the reads a batch of routings makes at once
	// (routeAll); 1 under a deterministic harness (Options.Spawn), whose
	// store may not be called from several goroutines.
	workers int
}

func (r *router) onPath(p string) {
	if r.onRoute != nil {
		r.onRoute(p)
	}
}

// routeReq is one finished run on its way to a state: what its job (or a
// recovery) knows once the agent is done.
type routeReq struct {
	cardID string
	claim  board.Claim // the claim the run was started under
	run    board.Run   // the run as its job knew it
	cls    policy.Classification
	res    *agent.Result // the agent's result; nil for a recovered run
	// verify is what the verify step found (nil when none ran).
	verify *board.VerifyResult
	// changes is what the attempt did to the card's branch (nil without
	// workspace.git).
	changes *board.Changes
	// recovering: the run is another owner's (or a past life's) whose
	// lease ended, routed by whoever recovers it.
	recovering bool
	// pending is an earlier write of this routing that failed in a way
	// that may have committed it (the store's reply was lost): a run found
	// routed just as pending wrote it was routed by it.
	pending *routing
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
func (r *router) route(ctx context.Context, req routeReq) (err error) {
	ctx, sp := tracing.Start(ctx, tracing.SpanRoute, tracing.Recovered(req.recovering))
	defer func() { tracing.End(sp, err) }()
	backoff := 200 * time.Millisecond
	for conflicts := 0; ; {
		w, err := r.try(ctx, req)
		switch {
		case err == nil:
			r.routed(ctx, w)
			r.onPath(w.path)
			return nil
		case errors.Is(err, errRouted):
			// The claim passed on and whoever took it routed the run: it is
			// recorded once. Or this routing's own write committed before
			// its reply was lost: the run is stored as it wrote it, and its
			// effects (metrics, the log line, the workspace) follow now.
			if p := req.pending; p != nil && ownWrite(w.run, p.run) {
				r.routed(ctx, *p)
				r.onPath(p.path)
				return nil
			}
			r.onPath(PathLost)
			return nil
		case errors.Is(err, errRenewed):
			r.onPath(PathRenewed)
			return nil
		case errors.Is(err, store.ErrConflict):
			// The card moved on meanwhile: read it again and decide again.
			// Each retry sees a newer version, so this ends; the bound is a
			// guard against a store that keeps refusing for another reason.
			if conflicts++; conflicts > 50 {
				return fmt.Errorf("routing run %s: still conflicting after %d tries: %w", req.run.ID, conflicts, err)
			}
		case errors.Is(err, store.ErrUnavailable) && ctx.Err() == nil:
			if w.sent {
				req.pending = &w
			}
			r.log.Warn("store unavailable while routing; retrying", "run_id", req.run.ID, "err", err)
			select {
			case <-ctx.Done():
				return err
			case <-r.after(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		default:
			return err
		}
	}
}

// try reads, decides and writes one routing. One routing at a time in
// this process: the decision reads the profile's breaker and the change
// writes it back. The breaker row's version makes a lost update impossible
// across processes; the lock keeps this process's routings from retrying
// against each other.
func (r *router) try(ctx context.Context, req routeReq) (routing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	env := r.env()
	f, err := readRoute(ctx, r.st, env.cfg.Policy, req, env.now)
	if err != nil {
		return routing{}, err
	}
	w, err := decideRoute(env, req, f)
	if err != nil {
		return w, err
	}
	r.queueNotices(&w)
	err = r.st.Apply(ctx, w.ch)
	w.sent = true
	if err != nil && w.lost && errors.Is(err, store.ErrConflict) {
		// Only the run was to be written, and it has an outcome: someone
		// else routed it. Its metrics count it here once all the same.
		r.count(w.run)
		return w, errRouted
	}
	return w, err
}

// queueNotices puts the routing's notifications in its change's outbox
// rows, so they are written with it or not at all.
func (r *router) queueNotices(w *routing) {
	for _, n := range w.notices {
		w.ch.Outbox = append(w.ch.Outbox, r.rows(w.cfg, n)...)
	}
}

// routeFacts is what routing reads from the store for one request.
type routeFacts struct {
	card     board.Card
	stored   board.Run   // the run as stored: the agent's report is on it
	history  []board.Run // every run of the card's current retry epoch
	breakers map[string]breaker
	// For a counted failure: the profile's runs of its fingerprint within
	// the correlation window and its latest success since the first of them
	// (a hold, policy.HoldFor), and when a human acted on the card in this
	// epoch (the repeat cap).
	peers   []policy.Peer
	changes []time.Time
}

// readRoute reads the card, its run as stored, the runs of its current
// retry epoch and the profiles' breakers; for a counted failure also the
// hold's peers and the card's human changes, as far as pc needs them.
func readRoute(ctx context.Context, st store.Store, pc policy.Config, req routeReq, now time.Time) (routeFacts, error) {
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
	if f.breakers, err = readBreakers(ctx, st); err != nil {
		return f, err
	}
	cls, fp := failureOf(req, f.stored)
	if !policy.Informative(fp) || !policy.Spec(cls.Kind).Counts {
		return f, nil
	}
	if pc.CorrelationOn() {
		if f.peers, err = readPeers(ctx, st, f.stored, fp, now.Add(-pc.CorrelationWindow)); err != nil {
			return f, err
		}
	}
	if pc.RepeatOn() && len(f.history) > 1 {
		f.changes, err = readChanges(ctx, st, f.card.ID, f.history)
	}
	return f, err
}

// failureOf is the run's classification with the agent's own report
// applied, and its failure fingerprint ("" for a success).
func failureOf(req routeReq, stored board.Run) (policy.Classification, string) {
	cls := policy.ApplyReport(req.cls, stored.Report) // the agent's own report (drover mcp), see report.go
	exit := -1
	if req.res != nil && !req.res.Signals.Signaled {
		exit = req.res.Signals.ExitCode
	}
	return cls, policy.FingerprintOf(cls, exit)
}

// readPeers are the runs of run's profile that finished since with
// fingerprint fp, other than run itself, with their cards' identifiers, and
// the profile's latest success after the first of them, if any.
func readPeers(ctx context.Context, st store.Store, run board.Run, fp string, since time.Time) ([]policy.Peer, error) {
	runs, err := st.ListRuns(ctx, store.RunFilter{Agent: run.Agent, Fingerprint: fp, FinishedSince: &since})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	first := since
	for _, r := range runs {
		if r.FinishedAt != nil && (first == since || r.FinishedAt.Before(first)) {
			first = *r.FinishedAt
		}
	}
	ok, err := st.ListRuns(ctx, store.RunFilter{Agent: run.Agent, Outcome: board.OutcomeSucceeded, FinishedSince: &first, Newest: true, Limit: 1})
	if err != nil {
		return nil, err
	}
	runs = append(runs, ok...)
	var ids []string
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.CardID] {
			seen[r.CardID] = true
			ids = append(ids, r.CardID)
		}
	}
	cards, err := st.ListCards(ctx, store.CardFilter{IDs: ids})
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, c := range cards {
		names[c.ID] = c.Identifier
	}
	var out []policy.Peer
	for _, r := range runs {
		if r.ID != run.ID {
			out = append(out, policy.Peer{Run: r, Card: names[r.CardID]})
		}
	}
	return out, nil
}

// readChanges are the times a human (an operator, the API, a tracker's
// sync; not drover, not an agent) edited, commented on, answered or moved
// the card since the epoch's first run was claimed.
func readChanges(ctx context.Context, st store.Store, cardID string, history []board.Run) ([]time.Time, error) {
	first := history[0].ClaimedAt
	for _, r := range history {
		if r.ClaimedAt.Before(first) {
			first = r.ClaimedAt
		}
	}
	evs, err := st.ListEvents(ctx, store.EventFilter{CardID: cardID, Since: &first, Limit: 1000, Newest: true})
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, e := range evs {
		if humanChange(e) {
			out = append(out, e.At)
		}
	}
	return out, nil
}

// humanChange: an event by which a person gave the next attempt something
// new.
func humanChange(e board.Event) bool {
	switch e.Type {
	case board.EvEdited, board.EvCommented, board.EvAnswered, board.EvMoved:
		return !strings.HasPrefix(e.Actor, "dispatcher:") && !strings.HasPrefix(e.Actor, "agent:")
	}
	return false
}

// routed does what follows a written routing: its trace, metrics and log
// line, and the workspace's cleanup once the card is in a sink.
func (r *router) routed(ctx context.Context, w routing) {
	tracing.Routed(ctx, w.run.Outcome, w.run.Kind, string(w.verb), w.next.State, w.run.Decision)
	r.count(w.run)
	if w.lost {
		return
	}
	r.log.Info("run finished", "card_id", w.next.ID, "identifier", w.next.Identifier, "run_id", w.run.ID, "attempt", w.run.Attempt,
		"outcome", w.run.Outcome, "kind", w.run.Kind, "counted", w.run.Counted, "verb", w.verb, "state", w.next.State, "why", w.run.Decision)
	if w.run.Workspace != "" && removesWorkspace(w.cfg, w.next) {
		removeWorkspace(r.log, w.cfg, w.next, w.run.Workspace, r.homes)
	}
}

// ownWrite says whether stored, a run found routed, is the run as mine
// wrote it: the same attempt, outcome, kind and decision (a decision names
// its times and reasons; another node's routing words its own). Counted is
// left out: a hold may have uncounted it since.
func ownWrite(stored, mine board.Run) bool {
	return stored.ID == mine.ID && stored.Attempt == mine.Attempt && stored.Outcome == mine.Outcome &&
		stored.Kind == mine.Kind && stored.Decision == mine.Decision
}

// env is what a decision takes besides the store's facts: the config in
// force, the clock, randomness, and who acts.
func (r *router) env() routeEnv {
	return routeEnv{cfg: r.config(), now: r.now().UTC(), rand: r.rand, node: r.node}
}

// rows are the outbox rows of a notice (none without Options.Outbox).
func (r *router) rows(cfg *config.Config, n Notice) []store.OutboxItem {
	if r.outbox == nil {
		return nil
	}
	return r.outbox(cfg, n)
}

func (r *router) count(run board.Run) {
	if r.metrics != nil {
		r.metrics.ObserveRun(run)
	}
}

func actorOf(node string) string { return "dispatcher:" + node }
