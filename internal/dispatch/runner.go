package dispatch

import (
	"context"
	"fmt"
	"github.com/drover-dev/drover/internal/agentchan"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
	"github.com/drover-dev/drover/internal/workspace"
)

// runner runs one attempt of a card: its workspace and hooks, its prompt,
// the agent, and the classification of what came out. It needs the config
// in force, the store (the card's conversation, the agent's own calls, the
// start's record) and the attempt with its progress sink; not the
// dispatcher, whose loop, claims and leases it knows nothing of.
type runner struct {
	st         store.Store
	records    *groupCommit // nil: each record is an Apply of its own
	logDir     string
	newAgent   func(agent.Profile) (agent.Agent, error)
	env        map[string]string  // added to every agent's environment
	mcpCommand string             // the drover binary agents run as their MCP server
	channel    *agentchan.Channel // the runs' capabilities; nil: none
	gitDir     string             // the repositories' mirrors (workspace.git)
	homes      string             // the cards' sandbox homes (Options.SandboxHomes); "": a fresh one per run
	node       string
	now        func() time.Time
	onRunning  func(cardID, runID string, pid int, at time.Time) // Options.OnRunning
}

// attempt is one run as the runner sees it.
type attempt struct {
	ctx      context.Context // cancelled, with its cause, when drover stops the run
	card     board.Card
	run      board.Run
	claim    board.Claim
	profile  string
	progress func(agent.Progress) // the run's live figures
	log      *slog.Logger
}

// outcome is what an attempt came to: the agent's result, the verdict on
// it, and the verify step's result when one ran.
type outcome struct {
	res     agent.Result
	cls     policy.Classification
	verify  *board.VerifyResult
	changes *board.Changes // what the attempt did to the card's branch (workspace.git)
	err     error
}

// run runs the attempt: its workspace, the agent, the verify step.
func (r *runner) run(a attempt, cfg *config.Config) outcome {
	logPath := filepath.Join(r.logDir, safeName(a.card.Identifier), a.run.ID+".log")
	makeLogDir(filepath.Dir(logPath))
	ws, err := r.prepare(a, cfg, logPath)
	defer ws.close()
	defer ws.revoke()
	if err != nil {
		res, cls, err := r.setupFailed(a, err)
		return outcome{res: res, cls: cls, err: err}
	}
	res, cls, runErr := r.invoke(a, cfg, ws, logPath)
	ws.revoke() // the agent has exited: its capability ends with it
	cls, changes := r.gitAfter(a, cfg, ws.git, cls)
	cls, vr := r.verify(a, cfg, ws, logPath, cls)
	if vr == nil || vr.Passed {
		cls = r.gitPush(a, ws.git, cls, changes)
	}
	// after_run cannot change the verdict: it runs once the run is classified.
	_ = runHook(context.WithoutCancel(a.ctx), ws.hooks, workspace.HookAfterRun, ws.dir, ws.hookEnv, ws.hookLog)
	return outcome{res: res, cls: cls, verify: vr, changes: changes, err: runErr}
}

// prepared is an attempt's workspace, ready for its agent.
type prepared struct {
	dir     string
	env     map[string]string // the agent's DROVER_* environment
	hooks   workspace.Hooks
	hookLog io.Writer
	hookEnv []string
	close   func()
	revoke  func()         // ends the run's capability (idempotent)
	binds   []sandbox.Bind // what a sandboxed agent sees besides its workspace: the capability's directory
	git     *gitSpace      // the card's worktree (workspace.git); nil without git
	home    string         // the card's sandbox home ("" = none kept)
}

// prepare makes the card's workspace (its git worktree with workspace.git)
// and runs its after_create (for a new one) and before_run hooks.
func (r *runner) prepare(a attempt, cfg *config.Config, logPath string) (prepared, error) {
	p := prepared{hookLog: io.Discard, close: func() {}, revoke: func() {}}
	wctx, wsp := tracing.Start(a.ctx, tracing.SpanWorkspace)
	var ws string
	var created bool
	var err error
	if cfg.Workspace.Git != nil {
		ws, created, p.git, err = r.worktree(wctx, a, cfg)
	} else if ws, created, err = workspace.Ensure(cfg.Workspace.Root, a.card.Identifier); err != nil {
		err = fmt.Errorf("workspace %s: %w", cfg.Workspace.Root, err)
	}
	if err != nil {
		tracing.End(wsp, err)
		return p, err
	}
	p.binds = append(p.binds, gitBinds(p.git)...)
	tracing.Workspace(wsp, ws, created)
	p.dir, p.env = ws, r.agentEnv(a, ws)
	if p.home, err = r.sandboxHome(a, cfg); err != nil {
		tracing.End(wsp, err)
		return p, err
	}
	if err := r.openChannel(a, cfg, &p); err != nil {
		tracing.End(wsp, err)
		return p, err
	}
	if tp := tracing.Traceparent(a.ctx); tp != "" {
		p.env["TRACEPARENT"] = tp
	}
	p.hooks = cfg.Hooks
	if p.hooks.AfterCreate != "" || p.hooks.BeforeRun != "" || p.hooks.AfterRun != "" {
		// Only a run with hooks has a hooks log (a file per run costs an
		// open and a close) and a hooks environment.
		if hookLog, _ := os.OpenFile(logPath+".hooks", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); hookLog != nil {
			p.hookLog, p.close = hookLog, func() { hookLog.Close() }
		}
		p.hookEnv = envSlice(p.env)
	}
	if created {
		err = runHook(wctx, p.hooks, workspace.HookAfterCreate, ws, p.hookEnv, p.hookLog)
	}
	if err == nil {
		err = runHook(wctx, p.hooks, workspace.HookBeforeRun, ws, p.hookEnv, p.hookLog)
	}
	if err == nil {
		err = r.markHead(wctx, p.git) // after the hooks: what they commit is not the attempt's
	}
	tracing.End(wsp, err)
	return p, err
}

// setupFailed is the verdict on an attempt whose workspace or hooks failed:
// workspace_setup, unless drover itself stopped the hook (shutdown, cancel,
// a lost lease), which is not the workspace's fault.
func (r *runner) setupFailed(a attempt, err error) (agent.Result, policy.Classification, error) {
	if sig, stopped := r.stoppedBy(a); stopped {
		return agent.Result{Signals: sig}, policy.Classify(sig, nil), err
	}
	return agent.Result{}, policy.Classification{Kind: policy.KindWorkspaceSetup, Message: err.Error(), Source: "workspace"}, err
}

// invoke renders the prompt, records the start and runs the agent in ws.
func (r *runner) invoke(a attempt, cfg *config.Config, ws prepared, logPath string) (agent.Result, policy.Classification, error) {
	p, text, resumed, err := r.promptFor(a, cfg, ws.dir)
	if err != nil {
		return agent.Result{}, policy.Classification{Kind: policy.KindInvalidInput, Message: "prompt: " + err.Error(), Source: "template"}, err
	}
	ag, err := r.newAgent(p)
	if err != nil {
		return agent.Result{}, policy.Classification{Kind: policy.KindConfigError, Message: err.Error(), Source: "profile"}, err
	}
	r.started(a, ws.dir, logPath, resumed)
	inv := agent.Invocation{Card: a.card, Run: a.run, Prompt: text, Workspace: ws.dir, LogPath: logPath, Env: ws.env,
		Timeout: p.Timeout, StallTimeout: p.StallTimeout, Progress: a.progress, ResumeSession: resumed, MCP: r.mcpServer(p, ws.env, logPath),
		Calls: r.calls(a, cfg), Tools: runTools(cfg.Tracker), SandboxBinds: ws.binds, SandboxHome: ws.home,
		Continue: func(ctx context.Context) bool { return r.wantsWork(ctx, a, cfg) },
		Running: func(pid int) {
			a.log.Debug("agent process running", "pid", pid)
			if r.onRunning != nil {
				r.onRunning(a.card.ID, a.run.ID, pid, time.Now())
			}
		},
		Started: func(l agent.Launch) {
			a.log.Info("agent command", "argv", strings.Join(l.Argv, " "), "env", strings.Join(l.EnvNames, " "))
			r.record(a, "the agent's command line", store.Change{Progress: []store.RunProgress{{RunID: a.run.ID, Argv: l.Argv, EnvNames: l.EnvNames}}})
		}}
	actx, asp := tracing.Start(a.ctx, tracing.SpanAgent, tracing.Agent(a.profile, p.Kind)...)
	res, runErr := ag.Run(actx, inv)
	res.Signals.Now = r.now()
	_, csp := tracing.Start(a.ctx, tracing.SpanClassify)
	cls := classifyResult(a.ctx, &res, runErr, p)
	st := res.Signals.Structured
	tracing.AgentExited(asp, res.Signals.ExitCode, res.Signals.KilledFor, st.TokensIn, st.TokensOut, st.CostUSD)
	tracing.Classified(csp, string(cls.Kind), cls.Source)
	csp.End()
	if cls.Kind != policy.KindSucceeded {
		tracing.Fail(asp, string(cls.Kind), cls.Message)
	}
	tracing.End(asp, runErr)
	return res, cls, runErr
}

// promptFor is the attempt's profile as it runs and its prompt: after a
// human's answer, the agent's own session goes on where its kind can
// resume it (the answer is the session's next user message).
func (r *runner) promptFor(a attempt, cfg *config.Config, ws string) (p agent.Profile, text, resumed string, err error) {
	conv, session, err := r.conversation(a.ctx, a.card, a.run, cfg.PromptReadsComments())
	if err != nil {
		a.log.Warn("could not read the card's question and answer; the prompt goes without them", "err", err)
	}
	if text, err = cfg.RenderPrompt(a.card, a.run.Attempt, a.run.ID, ws, conv); err != nil {
		return p, "", "", err
	}
	p, _ = cfg.Agents.Profile(a.profile)
	p = resolveCommand(cfg, p)
	// Symphony's agent.max_turns bounds the turns of kinds that can cap them.
	p.MaxTurns = cfg.Dispatch.MaxTurns
	if rp, ok := registry.Resume(p, session); ok {
		p, resumed, text = rp, session, prompt.ResumeMessage(a.card.Identifier, conv)
		a.log.Info("resuming the agent's session with the human's answer", "session_id", session)
	}
	return p, text, resumed, nil
}

// started records the start's figures and its event in one change, before
// the agent runs, so the event precedes anything the run does.
func (r *runner) started(a attempt, ws, logPath, resumed string) {
	now := r.now().UTC()
	r.record(a, "the run's start", store.Change{Progress: []store.RunProgress{{RunID: a.run.ID, StartedAt: &now, LogPath: logPath, Workspace: ws}},
		Events: []board.Event{{At: now, CardID: a.card.ID, RunID: a.run.ID, Type: board.EvStarted, Actor: actorOf(r.node),
			Reason: fmt.Sprintf("attempt %d started: agent %s in %s%s", a.run.Attempt, a.profile, ws, resumeNote(resumed))}}})
	a.log.Info("agent started", "agent", a.profile, "workspace", ws)
}

// record writes a change about the live run; the run goes on if it cannot
// be written (routing writes the run's end whatever happened here).
func (r *runner) record(a attempt, what string, ch store.Change) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 30*time.Second)
	defer cancel()
	var err error
	if r.records != nil {
		err = r.records.apply(ctx, r.st, ch)
	} else {
		err = r.st.Apply(ctx, ch)
	}
	if err != nil {
		a.log.Warn("could not record "+what+"; the run goes on", "err", err)
	}
}

// wantsWork says whether the attempt's card still wants work after one of
// its agent's turns ended well: the run is live, the card is still in a
// running column and the claim is still the attempt's. An agent (or
// operator) that moved the card on to review has said the work is done; a
// store error says no, so a turn is never started on a guess.
func (r *runner) wantsWork(ctx context.Context, a attempt, cfg *config.Config) bool {
	if a.ctx.Err() != nil {
		return false
	}
	c, err := r.st.GetCard(ctx, a.card.ID)
	if err != nil || c.Claim == nil || c.Claim.Owner != a.claim.Owner || c.Claim.Epoch != a.claim.Epoch {
		return false
	}
	return cfg.Board.RoleOf(c.State) == board.RoleRunning
}

// stoppedBy: drover stopped the attempt (shutdown, cancel, a lost lease,
// the spend cap), with the signals that say why.
func (r *runner) stoppedBy(a attempt) (policy.Signals, bool) {
	if cause := context.Cause(a.ctx); a.ctx.Err() != nil && cause != nil {
		return policy.Signals{ExitCode: -1, Signaled: true, KilledFor: killedFor(cause), Now: r.now()}, true
	}
	return policy.Signals{}, false
}
