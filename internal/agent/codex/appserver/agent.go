package appserver

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/version"
)

// Subcommand is the argument that puts codex in app-server mode.
const Subcommand = "app-server"

// Mode reports whether a codex profile's arguments run the app-server.
func Mode(args []string) bool { return slices.Contains(args, Subcommand) }

// exitGrace is how long the app-server has to exit once drover closes its
// stdin (0.171.0 exits at once, with status 0).
const exitGrace = 10 * time.Second

// progressInterval is the least time between two Invocation.Progress calls.
const progressInterval = 250 * time.Millisecond

// Agent runs a codex profile in app-server mode.
type Agent struct {
	profile agent.Profile
	kind    string
}

// New returns the app-server agent of a codex profile whose arguments are
// filled in (registry.WithDefaults).
func New(p agent.Profile, kind string) *Agent { return &Agent{profile: p, kind: kind} }

// Run starts the app-server in the workspace and holds one conversation:
// a thread (new, or the parked run's resumed), its first turn on the
// prompt, continuation turns while inv.Continue says the card still wants
// work (up to the profile's MaxTurns), then closes stdin. The error is
// only for not starting (as the command kind's) or for the app-server
// refusing the profile's settings (a *ConfigError).
func (a *Agent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	res := agent.Result{Signals: policy.Signals{AgentKind: a.kind, ExitCode: -1}}
	p := a.profile
	p.Prompt = command.PromptStdin // the prompt goes in turn/start, never in argv or a file
	spec, err := command.BuildSpec(p, inv)
	if err != nil {
		return res, err
	}
	spec.Stdin = nil
	launch := command.Describe(p, inv, spec)
	if inv.Started != nil {
		inv.Started(launch)
	}
	spec.Header = launch.String()
	spec.OnStart = inv.Running

	lines := make(chan []byte, 256)
	stopReading := make(chan struct{})
	spec.OnStdoutLine = func(b []byte) {
		select {
		case lines <- b:
		case <-stopReading: // the conversation is over; proc goes on draining
		}
	}
	stdin := make(chan io.WriteCloser, 1)
	spec.StdinPipe = func(w io.WriteCloser) { stdin <- w }
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var ex proc.Exit
	var runErr error
	exited := make(chan struct{})
	go func() {
		ex, runErr = proc.Run(runCtx, spec)
		close(lines)
		close(exited)
	}()
	var w io.WriteCloser
	select {
	case w = <-stdin:
	case <-exited:
		res.Signals.KilledFor = ex.KilledFor
		return res, runErr
	}

	pr := &progress{fn: inv.Progress}
	sess := newSession(w, lines, Options{
		Cwd: inv.Workspace, Prompt: inv.Prompt, Resume: inv.ResumeSession, MaxTurns: p.MaxTurns, Continue: inv.Continue,
		ApprovalPolicy: p.ApprovalPolicy, Sandbox: p.ThreadSandbox, TurnSandboxPolicy: p.TurnSandboxPolicy,
		Model: p.Model, Effort: p.ReasoningEffort, ServiceTier: p.ServiceTier,
		Card: inv.Card, Calls: inv.Calls, Tools: inv.Tools, ClientVersion: version.Get().Version,
	})
	sess.o.Changed = func() { pr.changed(sess.st) }
	convErr := sess.run(ctx)
	close(stopReading)
	w.Close() // end of input: the app-server exits
	ended := errors.Is(convErr, errEnded)
	select {
	case <-exited:
	case <-time.After(exitGrace):
		stop(proc.NewCause("conversation_over", nil))
		<-exited
	}
	res.Signals.ExitCode = ex.Code
	res.Signals.Signaled = ex.Signaled
	res.Signals.KilledFor = ex.KilledFor
	res.Signals.Stdout = ex.StdoutTail
	res.Signals.Stderr = ex.StderrTail
	if !ended && ctx.Err() == nil && ex.KilledFor == "conversation_over" {
		// drover stopped an app-server that outlived its conversation:
		// the conversation's end is the run's.
		res.Signals.ExitCode, res.Signals.Signaled, res.Signals.KilledFor = 0, false, ""
	}
	res.Signals.Structured = sess.st.Structured()
	if ended && !res.Signals.Structured.Finished && res.Signals.ExitCode == 0 && ex.KilledFor == "" {
		// It exited cleanly in the middle of the conversation: not a success.
		res.Signals.ExitCode = 1
		res.Signals.Structured.IsError = true
		res.Signals.Structured.ErrorMessages = append(res.Signals.Structured.ErrorMessages, errEnded.Error())
	}
	pr.final(sess.st)
	res.LastLine = sess.st.lastLine
	if res.LastLine == "" {
		res.LastLine = excerpt.LastLine(ex.StderrTail, 500)
	}
	if runErr != nil {
		return res, runErr
	}
	var ce *ConfigError
	if errors.As(convErr, &ce) {
		return res, ce
	}
	return res, nil
}

// progress reports the live view at most every progressInterval.
type progress struct {
	mu   sync.Mutex
	fn   func(agent.Progress)
	last time.Time
}

func (p *progress) changed(st *state) {
	if p.fn == nil || time.Since(p.last) < progressInterval {
		return
	}
	p.last = time.Now()
	p.report(st)
}

func (p *progress) final(st *state) {
	if p.fn != nil {
		p.report(st)
	}
}

func (p *progress) report(st *state) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in, out := st.tokens()
	p.fn(agent.Progress{LastLine: st.lastLine, TokensIn: in, TokensOut: out})
}
