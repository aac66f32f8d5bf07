package config

import (
	"encoding/json"
	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/gitwork"
	"slices"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/routing"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/workspace"
)

// The sections. A field's yaml tag is its key; its cfg tag says how the
// decoder reads it: lenient (a section shared with Symphony: an unknown key
// in it is reported as ignored), secret (an unset $VAR gives "" and a
// warning, and Redacted masks it), verbatim (no $VAR expansion), period
// (retention's "90d"). A duration whose key ends in _ms is Symphony's whole
// milliseconds.

// file is the front matter as written: the Config's sections that it holds
// as they are, and the others in the file's own shape, for build to turn
// into the Config's.
type file struct {
	Config
	Agents  agentsFile  `yaml:"agents"`
	Policy  policyFile  `yaml:"policy"`
	Hooks   hooksFile   `yaml:"hooks" cfg:"lenient"`
	Tracker trackerFile `yaml:"tracker" cfg:"lenient"`
	Store   yaml.Node   `yaml:"store"` // a DSN, or {dsn: …}
	Polling struct {    // Symphony's spelling of dispatch.poll_interval
		Interval time.Duration `yaml:"interval_ms"`
	} `yaml:"polling" cfg:"lenient"`
	Agent struct { // Symphony's spellings of dispatch keys
		MaxConcurrent   int            `yaml:"max_concurrent_agents"`
		MaxTurns        int            `yaml:"max_turns"`
		MaxRetryBackoff time.Duration  `yaml:"max_retry_backoff_ms"`
		ByState         map[string]int `yaml:"max_concurrent_agents_by_state"`
	} `yaml:"agent" cfg:"lenient"`
}

// defaults is the file with every default: what the file gives overwrites it.
func defaults() *file {
	f := &file{Config: Config{
		Board:  board.Default(),
		Policy: policy.Defaults(),
		Limits: Limits{AgentCommentsPerRun: DefaultAgentCommentsPerRun, AgentCommentsPerCard: DefaultAgentCommentsPerCard,
			AgentProgressPerRun: DefaultAgentProgressPerRun, AgentProgressPerCard: DefaultAgentProgressPerCard},
		Notify:    notify.Config{Slack: notify.Slack{Events: slices.Clone(notify.DefaultEvents)}},
		Workspace: Workspace{Cleanup: workspace.DefaultCleanup},
		Dispatch:  Dispatch{Lease: 30 * time.Second, PollInterval: 5 * time.Second, MaxConcurrent: 4, MaxTurns: 20, MaxRetryBackoff: 5 * time.Minute},
		Retention: Retention{Events: DefaultRetainEvents, Runs: DefaultRetainRuns, Logs: DefaultRetainLogs},
		Verify:    Verify{Timeout: DefaultVerifyTimeout},
	}}
	f.Hooks.Timeout, f.Tracker.Kind = time.Minute, tracker.KindNative
	p := &f.Config.Policy
	f.Policy.Config = p
	f.Policy.Breaker.Threshold, f.Policy.Breaker.Window, f.Policy.Breaker.Cooldown = &p.BreakerThreshold, &p.BreakerWindow, &p.BreakerCooldown
	f.Policy.Correlation.Cards, f.Policy.Correlation.Window = &p.CorrelationCards, &p.CorrelationWindow
	return f
}

// Agents is the agents: section.
type Agents struct {
	Default  string                   `json:"default"`
	Profiles map[string]agent.Profile `json:"profiles"`
	// Verify holds the profiles' own verify steps
	// (agents.profiles.NAME.verify), by profile name.
	Verify map[string]Verify `json:"verify,omitempty"`
	// The routing table: label routes, fallback chains, caps.
	routing.Table
}

type agentsFile struct {
	Default  string                 `yaml:"default"`
	Profiles map[string]profileFile `yaml:"profiles"`
	routing.File
}

// profileFile is a profile as written: agent.Profile's keys, a spec_schema
// in YAML or as a JSON string, and the profile's own verify step.
type profileFile struct {
	agent.Profile
	SpecSchema any     `yaml:"spec_schema"`
	Verify     *Verify `yaml:"verify"`
	routing.ProfileKeys
}

func (p *profileFile) setDefaults() { p.Profile = newProfile("", "") }

// newProfile is a profile of kind with the defaults of the keys it leaves out.
func newProfile(name, kind string) agent.Profile {
	return agent.Profile{Name: name, Kind: kind, Prompt: "stdin", Timeout: time.Hour, StallTimeout: 5 * time.Minute, Resume: agent.ResumeAuto, MCP: agent.MCPAuto}
}

// policyFile is policy: in the file's shape over Config.Policy, which it
// embeds: what the file gives overwrites policy.Defaults(), the keys that
// policy.Config holds flat through the pointers into it.
type policyFile struct {
	*policy.Config
	Kinds   map[policy.Kind]kindFile `yaml:"kinds"`
	Breaker struct {
		Threshold *int           `yaml:"threshold"`
		Window    *time.Duration `yaml:"window"`
		Cooldown  *time.Duration `yaml:"cooldown"`
	} `yaml:"breaker"`
	Correlation struct {
		Cards  *int           `yaml:"cards"`
		Window *time.Duration `yaml:"window"`
	} `yaml:"correlation"`
}

type kindFile struct {
	Cap     *int            `yaml:"cap"`
	Tiers   []time.Duration `yaml:"tiers"`
	Backoff yaml.Node       `yaml:"backoff"` // decoded over policy.backoff
}

// Caps on what agents write, by default: enough for any run that reports
// as it goes (a comment is at most 8,000 characters, a note 500), few
// enough that a chatty agent cannot grow a card without bound.
const (
	DefaultAgentCommentsPerRun  = 100
	DefaultAgentCommentsPerCard = 1000
	DefaultAgentProgressPerRun  = 1000
	DefaultAgentProgressPerCard = 10000
)

// Limits is the spend section (zero means off) and the caps on what agents
// write (negative means no cap).
type Limits struct {
	MaxCostPerDayUSD  float64 `json:"max_cost_per_day_usd" yaml:"max_cost_per_day_usd"`
	MaxCostPerCardUSD float64 `json:"max_cost_per_card_usd" yaml:"max_cost_per_card_usd"`
	// EstimatedCostPerRunUSD is what the day cap reserves for each run in
	// flight; 0 = the average of recent runs (see policy.NewDayBudget).
	EstimatedCostPerRunUSD float64            `json:"estimated_cost_per_run_usd" yaml:"estimated_cost_per_run_usd"`
	DayBoundary            policy.DayBoundary `json:"day_boundary" yaml:"day_boundary"`
	// What an agent may write through drover mcp / drover run: comments
	// (drover_comment) and progress notes (drover_progress) per run and
	// per card (the rows the store keeps; retention.events prunes them).
	// A call past a cap is refused with a tool error; negative is no cap.
	AgentCommentsPerRun  int `json:"agent_comments_per_run" yaml:"agent_comments_per_run"`
	AgentCommentsPerCard int `json:"agent_comments_per_card" yaml:"agent_comments_per_card"`
	AgentProgressPerRun  int `json:"agent_progress_per_run" yaml:"agent_progress_per_run"`
	AgentProgressPerCard int `json:"agent_progress_per_card" yaml:"agent_progress_per_card"`
}

// Workspace is where each card's working directory lives.
type Workspace struct {
	Root    string `json:"root" yaml:"root"`       // absolute
	Cleanup string `json:"cleanup" yaml:"cleanup"` // workspace.Cleanup*
	// Git, when set, makes each card's workspace a git worktree on a branch
	// of its own (workspace.git); nil keeps plain directories.
	Git *Git `json:"git,omitempty" yaml:"git"`
}

// Git is workspace.git: the repository cards work on (gitwork.Config) and
// the pull requests of their branches.
type Git struct {
	gitwork.Config
	// PullRequests is workspace.git.pull_request (nil: drover pushes the
	// branch and opens no pull request).
	PullRequests *forge.Config `json:"pull_request,omitempty" yaml:"pull_request"`
}

type hooksFile struct {
	workspace.Hooks
	SymphonyTimeout time.Duration `yaml:"timeout_ms"` // whole milliseconds
}

// Dispatch is the dispatcher's own settings. Symphony's polling.interval_ms
// and agent.* keys fill it when dispatch: does not.
type Dispatch struct {
	Node                 string         `json:"node" yaml:"node"` // default: the hostname
	Lease                time.Duration  `json:"lease" yaml:"lease"`
	PollInterval         time.Duration  `json:"poll_interval" yaml:"poll_interval"`
	MaxConcurrent        int            `json:"max_concurrent" yaml:"max_concurrent"`
	MaxConcurrentByState map[string]int `json:"max_concurrent_by_state,omitempty" yaml:"max_concurrent_by_state"`
	MaxTurns             int            `json:"max_turns" yaml:"max_turns"`
	MaxRetryBackoff      time.Duration  `json:"max_retry_backoff" yaml:"max_retry_backoff"`
}

// Store is where drover keeps its state. An empty DSN means the caller
// decides (the CLI's --store flag or its default beside the config).
type Store struct {
	DSN string `json:"dsn" yaml:"dsn" cfg:"secret"` // may hold a password: masked by Redacted
}

// Server is the HTTP API and dashboard. Port 0 means off.
type Server struct {
	Host      string `json:"host" yaml:"host"`
	Port      int    `json:"port" yaml:"port"`
	AuthToken string `json:"auth_token" yaml:"auth_token" cfg:"secret"`
}

// Codex holds Symphony's codex: keys. When agents.profiles is absent,
// codex.command becomes a profile named "codex" of kind codex. The
// app-server settings apply when codex.command runs `codex app-server`;
// with `codex exec` they are not used and are listed in Config.Ignored.
type Codex struct {
	Command           string        `json:"command,omitempty" yaml:"command" cfg:"verbatim"`
	TurnTimeout       time.Duration `json:"turn_timeout,omitempty" yaml:"turn_timeout_ms"`
	ReadTimeout       time.Duration `json:"read_timeout,omitempty" yaml:"read_timeout_ms"`
	StallTimeout      time.Duration `json:"stall_timeout,omitempty" yaml:"stall_timeout_ms"`
	ApprovalPolicy    any           `json:"approval_policy,omitempty" yaml:"approval_policy"`
	ThreadSandbox     string        `json:"thread_sandbox,omitempty" yaml:"thread_sandbox"`
	TurnSandboxPolicy any           `json:"turn_sandbox_policy,omitempty" yaml:"turn_sandbox_policy"`
	// Model, ReasoningEffort and ServiceTier are the codex profile's
	// (agent.Profile), in exec and app-server mode alike.
	Model           string `json:"model,omitempty" yaml:"model"`
	ReasoningEffort string `json:"reasoning_effort,omitempty" yaml:"reasoning_effort"`
	ServiceTier     string `json:"service_tier,omitempty" yaml:"service_tier"`
}

// Retention is how long drover keeps history (see docs/reliability.md,
// "A store that lives for years"); zero keeps that kind forever. Never
// removed: an open run, a card's latest run and its log, and a
// notification not yet delivered.
type Retention struct {
	Events time.Duration `json:"events" yaml:"events" cfg:"period"` // events, and delivered or dead notifications
	Runs   time.Duration `json:"runs" yaml:"runs" cfg:"period"`     // finished runs, with their logs
	Logs   time.Duration `json:"logs" yaml:"logs" cfg:"period"`     // run log files (the run rows stay)
}

// Day is the unit retention periods are usually written in ("90d").
const Day = 24 * time.Hour

// Retention defaults: three months of events, six of runs, one of logs.
const (
	DefaultRetainEvents = 90 * Day
	DefaultRetainRuns   = 180 * Day
	DefaultRetainLogs   = 30 * Day
)

// MarshalJSON writes the periods as strings ("90d", "forever").
func (r Retention) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"events": RetentionString(r.Events), "runs": RetentionString(r.Runs), "logs": RetentionString(r.Logs)})
}

// RetentionString writes a retention period as WORKFLOW.md would: whole
// days as "90d", 0 as "forever", anything else as a Go duration.
func RetentionString(d time.Duration) string {
	switch {
	case d == 0:
		return "forever"
	case d%Day == 0:
		return strconv.FormatInt(int64(d/Day), 10) + "d"
	}
	return d.String()
}

// Verify is what drover runs in a card's workspace after a clean exit to
// decide that the work is done: each command in turn (sh -c), within
// Timeout for all of them. No commands: a clean exit is done as before.
type Verify struct {
	Commands []string      `json:"commands,omitempty" yaml:"commands"`
	Timeout  time.Duration `json:"timeout" yaml:"timeout"`
}

// DefaultVerifyTimeout bounds a verify step that gives no timeout.
const DefaultVerifyTimeout = 10 * time.Minute

func (v *Verify) setDefaults() { v.Timeout = DefaultVerifyTimeout }

type trackerFile struct {
	tracker.Config
	Provider struct { // Symphony's place for the project
		ProjectSlug string `yaml:"project_slug"`
	} `yaml:"provider" cfg:"lenient"`
	Roles map[board.Role]*tracker.RoleMapping `yaml:"roles"` // null: the role is not projected
}
