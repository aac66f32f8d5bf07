// Package command is the generic agent: it runs the program an agent profile
// names, passes it the prompt (stdin, a file or an argument), and turns the
// process's end into agent.Result. The Claude and Codex kinds reuse it by
// plugging in an agent.Parser for their structured output.
package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

// Kind is the agent kind of this package.
const Kind = "command"

// Registration is the command kind's entry in agent/registry.
func Registration() agent.Registration {
	return agent.Registration{
		Kind:            Kind,
		Doc:             "runs the profile's program with the prompt on stdin, in a file or as an argument; only rules, phrases and the exit code classify it",
		RequiresCommand: true,
		New:             func(p agent.Profile) (agent.Agent, error) { return New(p, nil), nil },
	}
}

// Prompt modes (agent profile key "prompt").
const (
	PromptStdin = "stdin" // the default: the prompt is the program's stdin
	PromptFile  = "file"  // written to a file named by DROVER_PROMPT_FILE and {{prompt_file}}
	PromptArg   = "arg"   // replaces {{prompt}} in args, else appended as the last arg
)

// Argument placeholders.
const (
	PlaceholderPrompt     = "{{prompt}}"
	PlaceholderPromptFile = "{{prompt_file}}"
)

// ProgressInterval is the least time between two Invocation.Progress calls.
const ProgressInterval = 250 * time.Millisecond

// maxArgPrompt is Linux's limit on one argument (MAX_ARG_STRLEN - 1).
const maxArgPrompt = 128<<10 - 1

// maxLastLine bounds, in runes, the last line shown for a run.
const maxLastLine = 500

// ErrConfig is agent.ErrConfig, which the command kind's start errors wrap.
var ErrConfig = agent.ErrConfig

// commandAgent runs a profile's program.
type commandAgent struct {
	profile   agent.Profile
	newParser func() agent.Parser
	wireMCP   func(agent.MCPServer) (agent.MCPWiring, error)
}

// New returns an agent that runs profile's command. parser, if not nil, makes
// a fresh Parser for every run.
func New(profile agent.Profile, parser func() agent.Parser) agent.Agent {
	return &commandAgent{profile: profile, newParser: parser}
}

// NewWired is New for a kind that can wire drover's MCP server into its
// program (agent.Registration.MCP): a run whose Invocation has MCP set
// gets wire's arguments and variables.
func NewWired(profile agent.Profile, parser func() agent.Parser, wire func(agent.MCPServer) (agent.MCPWiring, error)) agent.Agent {
	return &commandAgent{profile: profile, newParser: parser, wireMCP: wire}
}

// Run runs one attempt. The error is only for not starting at all: a
// *proc.NotFoundError (proc.ErrNotFound) for a missing program, ErrConfig
// for a profile that cannot run, else an I/O error (log, prompt file).
func (a *commandAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	kind := a.profile.Kind
	if kind == "" {
		kind = Kind
	}
	res := agent.Result{Signals: policy.Signals{AgentKind: kind, ExitCode: -1}}
	spec, err := BuildSpec(a.profile, inv)
	if err != nil {
		return res, err
	}
	if inv.MCP != nil && a.wireMCP != nil {
		m := *inv.MCP
		m.RunEnv, m.Workspace = spec.Env, spec.Dir
		w, err := a.wireMCP(m)
		if err != nil {
			return res, fmt.Errorf("wiring drover's MCP server into the run: %w", err)
		}
		spec = wire(spec, w)
		if m.Dir != "" {
			spec.Binds = append(spec.Binds, sandbox.Bind{Path: m.Dir, Try: true})
		}
		if m.Command != "" {
			spec.Binds = append(spec.Binds, sandbox.Bind{Path: m.Command})
		}
	}
	launch := Describe(a.profile, inv, spec)
	if inv.Started != nil {
		inv.Started(launch)
	}
	spec.Header = launch.String()
	w := &watcher{fn: inv.Progress}
	if a.newParser != nil {
		w.parser = a.newParser()
	}
	spec.OnStdoutLine = w.line
	spec.OnOutput = w.output
	spec.OnStart = inv.Running
	stop := w.start()
	ex, err := proc.Run(ctx, spec)
	stop()
	res.Signals.ExitCode = ex.Code
	res.Signals.Signaled = ex.Signaled
	res.Signals.KilledFor = ex.KilledFor
	res.Signals.Stdout = ex.StdoutTail
	res.Signals.Stderr = ex.StderrTail
	if f, ok := w.parser.(agent.StderrFeeder); ok {
		// Parsers that read stderr (gemini: start-up refusals, the failed
		// request's status; codex) get it as `drover classify` gives it:
		// after stdout, line by line.
		for l := range strings.Lines(ex.StderrTail) {
			f.FeedStderr([]byte(strings.TrimSuffix(l, "\n")))
		}
	}
	if w.parser != nil {
		res.Signals.Structured = w.parser.Structured()
	}
	res.LastLine = w.lastLine(ex.StderrTail)
	return res, err
}

// BuildSpec turns a profile and an invocation into the process to run:
// command, args with placeholders filled, the prompt delivered per mode, and
// the environment: proc.BaseEnv(), then the variables named by
// profile.EnvPassthrough that are set in drover's environment, then
// profile.Env, then inv.Env (later wins), plus DROVER_WORKSPACE (if not given) and DROVER_PROMPT_FILE (file
// mode). Timeouts come from inv, else from the profile. In file mode the
// prompt is written beside the log (<log without extension>.prompt.md), or
// to <workspace>/.drover/prompt.md when there is no log path.
func BuildSpec(p agent.Profile, inv agent.Invocation) (proc.Spec, error) {
	env := map[string]string{}
	for _, kv := range proc.BaseEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range p.EnvPassthrough {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range p.Env {
		env[k] = v
	}
	for k, v := range inv.Env {
		env[k] = v
	}
	if _, ok := env["DROVER_WORKSPACE"]; !ok && inv.Workspace != "" {
		env["DROVER_WORKSPACE"] = inv.Workspace
	}
	s := proc.Spec{
		Path:         p.Command,
		Dir:          inv.Workspace,
		LogPath:      inv.LogPath,
		MaxLogBytes:  p.MaxLogBytes,
		Timeout:      firstNonZero(inv.Timeout, p.Timeout),
		StallTimeout: firstNonZero(inv.StallTimeout, p.StallTimeout),
		Sandbox:      p.Sandbox,
		Binds:        slices.Clone(inv.SandboxBinds),
		SandboxHome:  inv.SandboxHome,
	}
	if bin := env["DROVER_BIN"]; bin != "" && filepath.IsAbs(bin) {
		// drover run … and drover mcp inside a sandbox
		s.Binds = append(s.Binds, sandbox.Bind{Path: bin, Try: true})
	}
	mode := p.Prompt
	if mode == "" {
		mode = PromptStdin
	}
	where := "agents.profiles." + p.Name
	args := append([]string{}, p.Args...)
	uses := func(ph string) bool {
		for _, a := range args {
			if strings.Contains(a, ph) {
				return true
			}
		}
		return false
	}
	switch mode {
	case PromptStdin:
		s.Stdin = []byte(inv.Prompt)
	case PromptFile:
		file, err := writePromptFile(inv)
		if err != nil {
			return s, err
		}
		env["DROVER_PROMPT_FILE"] = file
		s.Binds = append(s.Binds, sandbox.Bind{Path: file})
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], PlaceholderPromptFile, file)
		}
	case PromptArg:
		if len(inv.Prompt) > maxArgPrompt {
			return s, fmt.Errorf("%w: %s.prompt: the prompt is %d bytes, over the %d a single argument may hold; use prompt: file or stdin", ErrConfig, where, len(inv.Prompt), maxArgPrompt)
		}
		if uses(PlaceholderPrompt) {
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], PlaceholderPrompt, inv.Prompt)
			}
		} else {
			args = append(args, inv.Prompt)
		}
	default:
		return s, fmt.Errorf("%w: %s.prompt: %q is not one of stdin, file, arg", ErrConfig, where, p.Prompt)
	}
	if mode != PromptArg && uses(PlaceholderPrompt) {
		return s, fmt.Errorf("%w: %s.args use %s but the prompt mode is %s; set prompt: arg", ErrConfig, where, PlaceholderPrompt, mode)
	}
	if mode != PromptFile && uses(PlaceholderPromptFile) {
		return s, fmt.Errorf("%w: %s.args use %s but the prompt mode is %s; set prompt: file", ErrConfig, where, PlaceholderPromptFile, mode)
	}
	s.Args = args
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.Env = append(s.Env, k+"="+env[k])
	}
	return s, nil
}

// writePromptFile writes the prompt where the run can read it; see BuildSpec.
func writePromptFile(inv agent.Invocation) (string, error) {
	var file string
	switch {
	case inv.LogPath != "":
		file = strings.TrimSuffix(inv.LogPath, filepath.Ext(inv.LogPath)) + ".prompt.md"
	case inv.Workspace != "":
		file = filepath.Join(inv.Workspace, ".drover", "prompt.md")
	default:
		return "", fmt.Errorf("%w: prompt: file needs a log path or a workspace to write the prompt to", ErrConfig)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		return "", fmt.Errorf("prompt file: %w", err)
	}
	if err := os.WriteFile(file, []byte(inv.Prompt), 0o600); err != nil {
		return "", fmt.Errorf("prompt file: %w", err)
	}
	return file, nil
}

func firstNonZero(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// watcher feeds the parser and reports progress at most every
// ProgressInterval, from the process's one progress goroutine (ticks) so a
// slow Progress callback never holds up the pipes.
type watcher struct {
	mu     sync.Mutex
	parser agent.Parser
	fn     func(agent.Progress)
	last   string // last non-blank stdout line
	dirty  bool
}

func (w *watcher) line(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parser != nil {
		w.parser.Feed(b)
	}
	if t := strings.TrimSpace(string(b)); t != "" {
		w.last = t
	}
	w.dirty = true
}

func (w *watcher) output() {
	w.mu.Lock()
	w.dirty = true
	w.mu.Unlock()
}

// snapshot returns the progress if anything changed since the last one.
func (w *watcher) snapshot(force bool) (agent.Progress, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.dirty && !force {
		return agent.Progress{}, false
	}
	w.dirty = false
	p := agent.Progress{LastLine: w.last}
	if w.parser != nil {
		var line string
		line, p.TokensIn, p.TokensOut, p.CostUSD = w.parser.Progress()
		if line != "" {
			p.LastLine = line
		}
	}
	p.LastLine = excerpt.Clip(p.LastLine, maxLastLine)
	return p, true
}

// start begins periodic reporting; the returned func stops it after a final
// report.
func (w *watcher) start() func() {
	if w.fn == nil {
		return func() {}
	}
	ticks.add(w)
	return func() {
		ticks.remove(w)
		p, _ := w.snapshot(true)
		w.fn(p)
	}
}

// lastLine is the parser's line, else the last stdout line, else the last
// line of stderr.
func (w *watcher) lastLine(stderrTail string) string {
	p, _ := w.snapshot(true)
	if p.LastLine != "" {
		return p.LastLine
	}
	return excerpt.LastLine(stderrTail, maxLastLine)
}
