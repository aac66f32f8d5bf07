package dispatch

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/tracing"
	"github.com/drover-dev/drover/internal/workspace"
)

// job is one live run owned by this process.
type job struct {
	card      board.Card
	run       board.Run
	claim     board.Claim
	profile   string
	fromState string
	ctx       context.Context
	cancelFn  context.CancelCauseFunc
	trace     context.Context // carries the run's root span; never cancelled
	span      tracing.Span    // the run's root span, ended after routing
	finished  chan struct{}
	once      sync.Once
	// agentDone: the agent has finished; the heartbeat leaves the claim
	// to routing.
	agentDone atomic.Bool
}

func (j *job) cancel(cause error) { j.once.Do(func() { j.cancelFn(cause) }) }

// liveJobs are this process's live runs, by card id.
type liveJobs struct {
	mu sync.Mutex
	m  map[string]*job
	// beating: the heartbeat goroutine runs (see ensureBeating).
	beating bool
}

func (l *liveJobs) add(j *job) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*job{}
	}
	l.m[j.card.ID] = j
}

func (l *liveJobs) remove(cardID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, cardID)
}

func (l *liveJobs) has(cardID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.m[cardID]
	return ok
}

func (l *liveJobs) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

// snapshot lists the live jobs in a stable order (reconcile and Heartbeat
// walk it), which keeps a seeded simulation reproducible.
func (l *liveJobs) snapshot() []*job {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*job, 0, len(l.m))
	for _, j := range l.m {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].card.Identifier < out[b].card.Identifier })
	return out
}

// start launches the run in its own goroutine; tctx carries the run's root
// span (tracing.StartRun), which the job ends once the run is routed.
func (d *Dispatcher) start(tctx context.Context, c board.Card, r board.Run, profile, fromState string, eligibleSince time.Time) {
	ctx, cancel := context.WithCancelCause(tctx)
	j := &job{card: c, run: r, claim: *c.Claim, profile: profile, fromState: fromState, ctx: ctx, cancelFn: cancel, finished: make(chan struct{}),
		trace: tctx, span: tracing.FromContext(tctx)}
	d.jobs.add(j)
	if d.o.Metrics != nil && !eligibleSince.IsZero() {
		d.o.Metrics.ObserveStart(profile, d.o.Now().Sub(eligibleSince))
	}
	if d.o.Spawn != nil {
		d.o.Spawn(func() { d.runJob(j) })
		return
	}
	go d.runJob(j)
}

// runJob prepares the workspace, runs the agent, and routes the outcome.
func (d *Dispatcher) runJob(j *job) {
	log := d.log.With("card_id", j.card.ID, "identifier", j.card.Identifier, "run_id", j.run.ID, "attempt", j.run.Attempt)
	defer func() {
		d.jobs.remove(j.card.ID)
		j.cancel(context.Canceled)
		close(j.finished)
		select {
		case d.done <- struct{}{}:
		default:
		}
	}()
	d.ensureBeating()
	cfg := d.cfg.Load()
	out := d.runner().run(attempt{ctx: j.ctx, card: j.card, run: j.run, claim: j.claim, profile: j.profile,
		progress: d.progress(j), log: log}, cfg)
	j.agentDone.Store(true) // no more renewals: routing ends the claim
	ctx, cancel := context.WithTimeout(j.trace, 2*time.Minute)
	defer cancel()
	err := d.routes.route(ctx, routeReq{cardID: j.card.ID, claim: j.claim, run: j.run, cls: out.cls, res: &out.res, verify: out.verify, changes: out.changes})
	if err != nil {
		log.Error("could not route the run", "err", err)
	}
	tracing.End(j.span, err)
}

// makeLogDir makes a card's log directory: one mkdir when the log root
// exists (every run but the first of a node), MkdirAll when it does not.
func makeLogDir(dir string) {
	if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrNotExist) {
		_ = os.MkdirAll(dir, 0o755)
	}
}

// resumeNote is what the started event adds for a resumed session.
func resumeNote(session string) string {
	if session == "" {
		return ""
	}
	return "; resuming session " + session + " with the answer"
}

// classifyResult is the verdict on a finished agent run: a forced one, a
// start failure, or policy.Classify on its signals (after noting in res why
// drover stopped the run, if it did).
func classifyResult(ctx context.Context, res *agent.Result, runErr error, p agent.Profile) policy.Classification {
	switch {
	case res.Forced != nil:
		return *res.Forced
	case runErr != nil && (errors.Is(runErr, proc.ErrNotFound) || errors.Is(runErr, agent.ErrConfig)):
		return policy.Classification{Kind: policy.KindConfigError, Message: runErr.Error(), Source: "start"}
	case runErr != nil && errors.As(runErr, new(*agent.InputError)):
		return policy.Classification{Kind: policy.KindInvalidInput, Message: runErr.Error(), Source: p.Kind}
	case runErr != nil:
		return policy.Classification{Kind: policy.KindUnknown, Message: runErr.Error(), Source: "start"}
	}
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		res.Signals.KilledFor = killedFor(cause)
		var op *operatorStop
		if errors.As(cause, &op) {
			res.Signals.StopReason = op.what
		}
	}
	return policy.Classify(res.Signals, p.Match)
}

// runHook runs one hook under a drover.hook span; an unconfigured hook
// runs nothing and leaves no span.
func runHook(ctx context.Context, hooks workspace.Hooks, name, ws string, env []string, w io.Writer) error {
	if hooks.Script(name) == "" {
		return nil
	}
	ctx, sp := tracing.Start(ctx, tracing.SpanHook, tracing.Hook(name))
	err := hooks.Run(ctx, name, ws, env, w)
	tracing.End(sp, err)
	return err
}

// operatorStop is the cause of a run stopped because an operator moved its
// card away; what says how, for the run's record.
type operatorStop struct{ what string }

func (e *operatorStop) Error() string { return "cancel: " + e.what }

// Is makes an operator's stop an errCancelled.
func (e *operatorStop) Is(target error) bool { return target == errCancelled }

// killedFor maps the cause a run was stopped for to the classifier's word.
func killedFor(cause error) string {
	switch {
	case errors.Is(cause, errShutdown):
		return "shutdown"
	case errors.Is(cause, errLeaseLost):
		return "lease_lost"
	case errors.Is(cause, errSpend):
		return "spend"
	}
	return "cancel"
}

func envSlice(m map[string]string) []string {
	out := append([]string{}, proc.BaseEnv()...)
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
