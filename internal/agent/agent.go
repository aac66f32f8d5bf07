// Package agent is the seam between the dispatcher and the programs that do the
// work: any command, Claude Code, Codex, and the built-in simulated agent.
package agent

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
)

// ErrConfig marks an agent profile that cannot run as configured (bad prompt
// mode, a placeholder the mode does not fill, a prompt too long for an
// argument). Like proc.ErrNotFound it is a config_error: fixing the profile
// is what makes it runnable. Kinds wrap it; the dispatcher tests for it.
var ErrConfig = errors.New("agent profile misconfigured")

// Agent runs one attempt. Run returns when the process has exited and been
// reaped (with its whole process group); err is for failures to start at all.
type Agent interface {
	Run(ctx context.Context, inv Invocation) (Result, error)
}

// Invocation is one run of one card.
type Invocation struct {
	Card         board.Card
	Run          board.Run
	Prompt       string
	Workspace    string            // absolute path; the process's working directory
	LogPath      string            // where stdout and stderr are captured
	Env          map[string]string // DROVER_* and the profile's env, already built
	Timeout      time.Duration     // total wall-clock cap (0 = none)
	StallTimeout time.Duration     // no output for this long stops the run (0 = none)
	Progress     func(Progress)    // optional; called as output arrives
	// ResumeSession is the agent's own session id this run continues (the
	// kind's ResumeArgs are already in the profile's args, and Prompt is the
	// next user message); "" for a new session.
	ResumeSession string
	// Started, when set, is called once the command line is known, before
	// the program starts: what ran, for the run's record.
	Started func(Launch)
	// Running, when set, is called once the agent's process runs (its exec
	// succeeded), with its pid, before any of its output is read. Kinds that
	// run no process of their own (the sim) never call it.
	Running func(pid int)
	// Continue, when set, is asked by kinds that run several turns in one
	// session (codex app-server) after each turn that ended well: whether
	// the card still wants work, i.e. it is still in its running column
	// under this run's claim. nil = one turn.
	Continue func(ctx context.Context) bool
	// MCP, when set, is drover's MCP server to wire into this run (the
	// kind's Registration.MCP does it); nil: none.
	MCP *MCPServer
	// Calls are the agent's own calls for kinds that run inside drover
	// (the sim): block, ask, done, comment, progress, fenced like drover
	// mcp's. Programs use drover mcp or drover run instead.
	Calls Calls
	// Tools are the dispatcher's extra tools for this run (a Linear
	// board's linear_graphql); kinds that cannot offer tools ignore them.
	Tools []Tool
	// SandboxBinds are host paths a sandboxed run sees besides its
	// workspace (the run's capability socket); ignored without a sandbox.
	SandboxBinds []sandbox.Bind
	// SandboxHome is the card's own home directory on the host, which a
	// sandboxed run sees at HOME (kept between the card's runs, so the
	// CLI's session resumes); "" = a fresh one per run.
	SandboxHome string
}

// Launch is what an agent ran: the argument vector with secrets redacted
// (argv[0] first) and the names, never the values, of the environment
// variables it was given.
type Launch struct {
	Argv     []string
	EnvNames []string
}

// Progress is what a running agent has shown so far.
type Progress struct {
	LastLine  string
	TokensIn  int64
	TokensOut int64
	CostUSD   float64
}

// MCP modes (agent profile key "mcp").
const (
	MCPAuto = "auto"
	MCPOff  = "off"
)

// Resume modes (agent profile key "resume").
const (
	ResumeAuto  = "auto"
	ResumeNever = "never"
)

// The values a profile's prompt, resume and mcp keys take.
var (
	PromptModes = []string{"stdin", "file", "arg"}
	ResumeModes = []string{ResumeAuto, ResumeNever}
	MCPModes    = []string{MCPAuto, MCPOff}
)

// Result is what the dispatcher needs to classify and record a finished run.
type Result struct {
	Signals  policy.Signals
	LastLine string
	// Forced, when set, is the verdict itself (the sim agent plays kinds that
	// only the dispatcher can observe); the dispatcher skips classification.
	Forced *policy.Classification
}

// Profile is a named agent configuration from WORKFLOW.md's agents.profiles;
// its yaml tags are the keys (a spec_schema is read by the config package).
type Profile struct {
	Name    string   `json:"name" yaml:"-"`
	Kind    string   `json:"kind" yaml:"kind"` // a kind of agent/registry
	Command string   `json:"command" yaml:"command"`
	Args    []string `json:"args" yaml:"args"`
	// ArgsMode says how Args meet the kind's default arguments:
	// ArgsAppend ("" or "append", the default) puts them after the
	// defaults; ArgsReplace makes them the whole argument list.
	ArgsMode string            `json:"args_mode,omitempty" yaml:"args_mode"`
	Env      map[string]string `json:"-" yaml:"env" cfg:"secret"`
	// EnvPassthrough names variables of drover's own environment the
	// agent inherits, on top of proc.BaseEnvKeys, CommonPassEnv and the
	// kind's Registration.PassEnv (the registry merges those in).
	EnvPassthrough []string       `json:"env_passthrough,omitempty" yaml:"env_passthrough" cfg:"verbatim"`
	Prompt         string         `json:"prompt" yaml:"prompt"` // stdin (default), file, arg
	Timeout        time.Duration  `json:"timeout" yaml:"timeout"`
	StallTimeout   time.Duration  `json:"stall_timeout" yaml:"stall_timeout"`
	Provider       string         `json:"provider" yaml:"provider"`
	SpecSchema     map[string]any `json:"spec_schema,omitempty" yaml:"-"`
	Match          []policy.Rule  `json:"match,omitempty" yaml:"match"` // tried before the built-in classification
	// Price per million tokens, used when the agent reports tokens but no cost.
	PriceInPerMTok  float64 `json:"price_in_per_mtok" yaml:"price_in_per_mtok"`
	PriceOutPerMTok float64 `json:"price_out_per_mtok" yaml:"price_out_per_mtok"`
	MaxLogBytes     int64   `json:"max_log_bytes" yaml:"max_log_bytes"`
	// Resume says whether the attempt after a human's answer continues the
	// agent's earlier session (ResumeAuto, the default, where the kind can)
	// or starts a new one (ResumeNever).
	Resume string `json:"resume" yaml:"resume"`
	// MCP says whether the run gets drover's MCP server (MCPAuto, the
	// default, for kinds whose Registration.MCP can wire it) or not (MCPOff).
	MCP string `json:"mcp" yaml:"mcp"`
	// MaxTurns is the dispatcher's turn cap for a run (dispatch.max_turns),
	// set by the dispatcher, not read from the profile; kinds whose program
	// can bound its turns pass it on (0 = none).
	MaxTurns int `json:"-" yaml:"-"`
	// Codex app-server settings (Symphony's codex.approval_policy,
	// codex.thread_sandbox, codex.turn_sandbox_policy): sent with
	// thread/start and turn/start; only a codex profile in app-server mode
	// reads them. ApprovalPolicy and TurnSandboxPolicy are JSON values (a
	// string or an object), TurnSandboxPolicy an object; nil/"" = Codex's
	// own configuration decides.
	ApprovalPolicy    any    `json:"approval_policy,omitempty" yaml:"approval_policy"`
	ThreadSandbox     string `json:"thread_sandbox,omitempty" yaml:"thread_sandbox"`
	TurnSandboxPolicy any    `json:"turn_sandbox_policy,omitempty" yaml:"turn_sandbox_policy"`
	// Codex model settings (Symphony's codex.model, codex.reasoning_effort,
	// codex.service_tier): only a codex profile reads them. In exec mode
	// they are -m and -c flags of its args (added at load); in app-server
	// mode they go with thread/start and turn/start. "" = Codex's own
	// configuration decides.
	Model           string `json:"model,omitempty" yaml:"model"`
	ReasoningEffort string `json:"reasoning_effort,omitempty" yaml:"reasoning_effort"`
	ServiceTier     string `json:"service_tier,omitempty" yaml:"service_tier"`
	// Sandbox, when set, runs the profile's program inside bwrap (see
	// package sandbox); its read and write paths are expanded at load.
	Sandbox *sandbox.Config `json:"sandbox,omitempty" yaml:"sandbox"`
}

// String is the launch as one line for the run log: the command line (each
// argument quoted when it holds a space or a quote) and the variable names.
func (l Launch) String() string {
	var b strings.Builder
	b.WriteString("run:")
	for _, a := range l.Argv {
		b.WriteByte(' ')
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	b.WriteString("; env: ")
	b.WriteString(strings.Join(l.EnvNames, " "))
	return b.String()
}

// IsEnvName reports whether s is a variable name (letters, digits and _,
// not starting with a digit).
func IsEnvName(s string) bool {
	for i, r := range s {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
