package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/store"
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

func (d *Dispatcher) hasJob(cardID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.jobs[cardID]
	return ok
}

func (d *Dispatcher) snapshotJobs() []*job {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*job, 0, len(d.jobs))
	for _, j := range d.jobs {
		out = append(out, j)
	}
	// A stable order (reconcile and Heartbeat walk it) keeps a seeded
	// simulation reproducible.
	sort.Slice(out, func(a, b int) bool { return out[a].card.Identifier < out[b].card.Identifier })
	return out
}

// start launches the run in its own goroutine; tctx carries the run's root
// span (tracing.StartRun), which the job ends once the run is routed.
func (d *Dispatcher) start(tctx context.Context, c board.Card, r board.Run, profile, fromState string, eligibleSince time.Time) {
	ctx, cancel := context.WithCancelCause(tctx)
	j := &job{card: c, run: r, claim: *c.Claim, profile: profile, fromState: fromState, ctx: ctx, cancelFn: cancel, finished: make(chan struct{}),
		trace: tctx, span: tracing.FromContext(tctx)}
	d.mu.Lock()
	d.jobs[c.ID] = j
	d.mu.Unlock()
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
		d.mu.Lock()
		delete(d.jobs, j.card.ID)
		d.mu.Unlock()
		j.cancel(context.Canceled)
		close(j.finished)
		select {
		case d.done <- struct{}{}:
		default:
		}
	}()
	d.ensureBeating()
	cfg := d.cfg.Load()
	res, cls, runErr := d.execute(j, cfg, log)
	j.agentDone.Store(true) // no more renewals: routing ends the claim
	ctx, cancel := context.WithTimeout(j.trace, 2*time.Minute)
	defer cancel()
	err := d.route(ctx, routeReq{cardID: j.card.ID, claim: j.claim, run: j.run, cls: cls, res: &res})
	if err != nil {
		log.Error("could not route the run", "err", err)
		_ = runErr
	}
	tracing.End(j.span, err)
}

// execute runs one attempt and returns the agent's result and its verdict.
func (d *Dispatcher) execute(j *job, cfg *config.Config, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) (agent.Result, policy.Classification, error) {
	logPath := filepath.Join(d.o.LogDir, safeName(j.card.Identifier), j.run.ID+".log")
	makeLogDir(filepath.Dir(logPath))
	setup := func(err error) (agent.Result, policy.Classification, error) {
		if cause := context.Cause(j.ctx); j.ctx.Err() != nil && cause != nil {
			// The hook was stopped by drover (shutdown, cancel, lost lease):
			// that is not the workspace's fault.
			sig := policy.Signals{ExitCode: -1, Signaled: true, KilledFor: killedFor(cause), Now: d.o.Now()}
			return agent.Result{Signals: sig}, policy.Classify(sig, nil), err
		}
		return agent.Result{}, policy.Classification{Kind: policy.KindWorkspaceSetup, Message: err.Error(), Source: "workspace"}, err
	}
	wctx, wsp := tracing.Start(j.ctx, tracing.SpanWorkspace)
	ws, created, err := workspace.Ensure(cfg.Workspace.Root, j.card.Identifier)
	if err != nil {
		err = fmt.Errorf("workspace %s: %w", cfg.Workspace.Root, err)
		tracing.End(wsp, err)
		return setup(err)
	}
	tracing.Workspace(wsp, ws, created)
	env := d.env(j, ws, cfg)
	if tp := tracing.Traceparent(j.ctx); tp != "" {
		env["TRACEPARENT"] = tp
	}
	hooks := workspace.Hooks{AfterCreate: cfg.Hooks.AfterCreate, BeforeRun: cfg.Hooks.BeforeRun, AfterRun: cfg.Hooks.AfterRun, BeforeRemove: cfg.Hooks.BeforeRemove, Timeout: cfg.Hooks.Timeout}
	var hw io.Writer = io.Discard
	var envList []string
	if hooks.AfterCreate != "" || hooks.BeforeRun != "" || hooks.AfterRun != "" {
		// Only a run with hooks has a hooks log (a file per run costs the
		// hot path an open and a close) and a hooks environment.
		if hookLog, _ := os.OpenFile(logPath+".hooks", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); hookLog != nil {
			defer hookLog.Close()
			hw = hookLog
		}
		envList = envSlice(env)
	}
	if created {
		if err := runHook(wctx, hooks, workspace.HookAfterCreate, ws, envList, hw); err != nil {
			tracing.End(wsp, err)
			return setup(err)
		}
	}
	err = runHook(wctx, hooks, workspace.HookBeforeRun, ws, envList, hw)
	tracing.End(wsp, err)
	if err != nil {
		return setup(err)
	}
	conv, session, err := d.conversation(j.ctx, j.card, j.run, cfg.PromptReadsComments())
	if err != nil {
		log.Warn("could not read the card's question and answer; the prompt goes without them", "err", err)
	}
	text, err := cfg.RenderRunPrompt(j.card, j.run.Attempt, j.run.ID, ws, conv)
	if err != nil {
		return agent.Result{}, policy.Classification{Kind: policy.KindInvalidInput, Message: "prompt: " + err.Error(), Source: "template"}, err
	}
	p, _ := cfg.Agents.Profile(j.profile)
	p = resolveCommand(cfg, p)
	// Symphony's agent.max_turns bounds the turns of kinds that can cap them.
	p.MaxTurns = cfg.Dispatch.MaxTurns
	// After a human's answer the agent's own session goes on, where its kind
	// can resume it: the answer is the session's next user message.
	resumed := ""
	if rp, ok := registry.Resume(p, session); ok {
		p, resumed, text = rp, session, prompt.ResumeMessage(j.card.Identifier, conv)
		log.Info("resuming the agent's session with the human's answer", "session_id", session)
	}
	ag, err := d.o.NewAgent(p)
	if err != nil {
		return agent.Result{}, policy.Classification{Kind: policy.KindConfigError, Message: err.Error(), Source: "profile"}, err
	}
	now := d.o.Now().UTC()
	// The start's figures and its event in one change.
	_ = d.o.Store.Apply(context.Background(), store.Change{Progress: []store.RunProgress{{RunID: j.run.ID, StartedAt: &now, LogPath: logPath, Workspace: ws}},
		Events: []board.Event{{At: now, CardID: j.card.ID, RunID: j.run.ID, Type: board.EvStarted,
			Actor: d.actor(), Reason: fmt.Sprintf("attempt %d started: agent %s in %s%s", j.run.Attempt, j.profile, ws, resumeNote(resumed))}}})
	log.Info("agent started", "agent", j.profile, "workspace", ws)
	inv := agent.Invocation{Card: j.card, Run: j.run, Prompt: text, Workspace: ws, LogPath: logPath, Env: env,
		Timeout: p.Timeout, StallTimeout: p.StallTimeout, Progress: d.progress(j), ResumeSession: resumed, MCP: d.mcpServer(p, env, logPath),
		Calls: d.calls(j), Tools: runTools(d.cfg.Load().Tracker),
		Continue: func(ctx context.Context) bool { return d.wantsWork(ctx, j) },
		Started: func(l agent.Launch) {
			log.Info("agent command", "argv", strings.Join(l.Argv, " "), "env", strings.Join(l.EnvNames, " "))
			_ = d.o.Store.Apply(context.Background(), store.Change{Progress: []store.RunProgress{{RunID: j.run.ID, Argv: l.Argv, EnvNames: l.EnvNames}}})
		}}
	actx, asp := tracing.Start(j.ctx, tracing.SpanAgent, tracing.Agent(j.profile, p.Kind)...)
	res, runErr := ag.Run(actx, inv)
	res.Signals.Now = d.o.Now()
	_, csp := tracing.Start(j.ctx, tracing.SpanClassify)
	cls := classifyResult(j.ctx, &res, runErr, p)
	st := res.Signals.Structured
	tracing.AgentExited(asp, res.Signals.ExitCode, res.Signals.KilledFor, st.TokensIn, st.TokensOut, st.CostUSD)
	tracing.Classified(csp, string(cls.Kind), cls.Source)
	csp.End()
	if cls.Kind != policy.KindSucceeded {
		tracing.Fail(asp, string(cls.Kind), cls.Message)
	}
	tracing.End(asp, runErr)
	// after_run cannot change the verdict: it runs once the run is classified.
	_ = runHook(context.WithoutCancel(j.ctx), hooks, workspace.HookAfterRun, ws, envList, hw)
	return res, cls, runErr
}

// makeLogDir makes a card's log directory: one mkdir when the log root
// exists (every run but the first of a node), MkdirAll when it does not.
func makeLogDir(dir string) {
	if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrNotExist) {
		_ = os.MkdirAll(dir, 0o755)
	}
}

// wantsWork says whether j's card still wants work after one of its
// agent's turns ended well: the run is live, the card is still in a
// running column and the claim is still j's. An agent (or operator) that
// moved the card on to review has said the work is done; a store error
// says no, so a turn is never started on a guess.
func (d *Dispatcher) wantsWork(ctx context.Context, j *job) bool {
	if j.ctx.Err() != nil {
		return false
	}
	c, err := d.o.Store.GetCard(ctx, j.card.ID)
	if err != nil || c.Claim == nil || c.Claim.Owner != j.claim.Owner || c.Claim.Epoch != j.claim.Epoch {
		return false
	}
	return d.cfg.Load().Board.RoleOf(c.State) == board.RoleRunning
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

// env is the agent's DROVER_* environment.
func (d *Dispatcher) env(j *job, ws string, cfg *config.Config) map[string]string {
	env := map[string]string{}
	for k, v := range d.o.Env {
		env[k] = v
	}
	env["DROVER_CARD_ID"] = j.card.ID
	env["DROVER_CARD_IDENTIFIER"] = j.card.Identifier
	env["DROVER_CARD_STATE"] = j.card.State
	env["DROVER_RUN_ID"] = j.run.ID
	env["DROVER_ATTEMPT"] = strconv.Itoa(j.run.Attempt)
	env["DROVER_WORKSPACE"] = ws
	env["DROVER_NODE"] = d.node
	if d.o.MCPCommand != "" {
		env["DROVER_BIN"] = d.o.MCPCommand // a command agent runs "$DROVER_BIN" mcp or "$DROVER_BIN" run …
	}
	return env
}

func envSlice(m map[string]string) []string {
	out := append([]string{}, proc.BaseEnv()...)
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
