// Package config loads drover's WORKFLOW.md: YAML front matter between ---
// lines, then a Liquid prompt template. Keys that Symphony-style workflow files
// use (tracker, polling, workspace, hooks, agent, codex, server) keep their
// meaning; drover's own sections (board, agents, policy, limits, notify,
// dispatch, store) add to them. Every error names the key path at fault and
// the fix.
package config

import (
	"encoding/json"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/prompt"
)

// Config is a loaded, validated WORKFLOW.md with every default filled in.
type Config struct {
	Path    string    `json:"path"`     // absolute path of the file ("" when parsed from bytes)
	ModTime time.Time `json:"mod_time"` // of the file when it was read
	Size    int64     `json:"size"`
	Hash    string    `json:"hash"` // sha256 of the file's bytes, hex

	Board     board.Board   `json:"board"`
	Agents    Agents        `json:"agents"`
	Policy    policy.Config `json:"policy"`
	Limits    Limits        `json:"limits"`
	Notify    Notify        `json:"notify"`
	Workspace Workspace     `json:"workspace"`
	Hooks     Hooks         `json:"hooks"`
	Dispatch  Dispatch      `json:"dispatch"`
	Tracker   Tracker       `json:"tracker"`
	Store     Store         `json:"store"`
	Server    Server        `json:"server"`
	Codex     Codex         `json:"codex"`

	// Prompt is the Liquid template source: the file's body, or DefaultPrompt
	// when the body is empty. PromptLine is the file line the body starts on.
	Prompt     string `json:"prompt"`
	PromptLine int    `json:"prompt_line"`

	// Ignored lists key paths present in the file that drover does not use.
	Ignored []string `json:"ignored,omitempty"`
	// Warnings are to be shown once at load (ignored keys, unset secret
	// variables, overridden Symphony keys). They never contain secret values.
	Warnings []string `json:"warnings,omitempty"`

	tmpl    *prompt.Template
	schemas map[string]*jsonschema.Schema
}

// Agents is the agents: section.
type Agents struct {
	Default  string                   `json:"default"`
	Profiles map[string]agent.Profile `json:"profiles"`
}

// Profile returns the named profile, or the default one for "".
func (a Agents) Profile(name string) (agent.Profile, bool) {
	if name == "" {
		name = a.Default
	}
	p, ok := a.Profiles[name]
	return p, ok
}

// Limits is the spend section. Zero means off.
type Limits struct {
	MaxCostPerDayUSD  float64 `json:"max_cost_per_day_usd"`
	MaxCostPerCardUSD float64 `json:"max_cost_per_card_usd"`
	// DayBoundary is when a spend day starts: "HH:MM" optionally followed by
	// an IANA zone name or UTC (default "00:00 UTC").
	DayBoundary string `json:"day_boundary"`

	dayOffset time.Duration
	dayLoc    *time.Location
}

// DayStart returns the start of the spend day that contains t.
func (l Limits) DayStart(t time.Time) time.Time {
	loc := l.dayLoc
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	start := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc).Add(l.dayOffset)
	if start.After(lt) {
		start = time.Date(lt.Year(), lt.Month(), lt.Day()-1, 0, 0, 0, 0, loc).Add(l.dayOffset)
	}
	return start
}

// Notify is where notifications go.
type Notify struct {
	Slack   Slack   `json:"slack"`
	Webhook Webhook `json:"webhook"`
	// AllowPrivate lets notification URLs resolve to private or loopback
	// addresses (off by default: the notifier refuses them).
	AllowPrivate bool `json:"allow_private"`
}

// Slack is an incoming-webhook target. An empty URL means off.
type Slack struct {
	URL    string   `json:"url"` // secret
	Events []string `json:"events"`
}

// Webhook is a generic signed HTTP POST target. An empty URL means off.
type Webhook struct {
	URL    string   `json:"url"`    // secret
	Secret string   `json:"secret"` // secret; HMAC key for the signature header
	Events []string `json:"events"` // empty: the default events (notify.DefaultEvents)
}

// NotifyEvents are the event names notify.*.events may list.
var NotifyEvents = []string{"blocked", "gave_up", "parked", "profile_paused", "profile_resumed", "succeeded", "done", "cancelled", "spend_paused", "config_error"}

// DefaultSlackEvents are sent to Slack when notify.slack.events is not given.
var DefaultSlackEvents = []string{"blocked", "gave_up", "parked", "profile_paused", "spend_paused", "config_error"}

// Workspace cleanup modes.
const (
	CleanupNever  = "never"
	CleanupOnDone = "on_done"
	CleanupOnSink = "on_sink" // done, blocked or cancelled
)

// Workspace is where each card's working directory lives.
type Workspace struct {
	Root    string `json:"root"`    // absolute
	Cleanup string `json:"cleanup"` // never | on_done | on_sink
}

// Hooks are shell scripts run in the workspace (Symphony's hooks: section).
// They are passed to the shell as written: $VARS are not expanded by drover.
type Hooks struct {
	AfterCreate  string        `json:"after_create"`
	BeforeRun    string        `json:"before_run"`
	AfterRun     string        `json:"after_run"`
	BeforeRemove string        `json:"before_remove"`
	Timeout      time.Duration `json:"timeout"`
}

// Dispatch is the dispatcher's own settings. Symphony's polling.interval_ms
// and agent.* keys fill it when dispatch: does not.
type Dispatch struct {
	Node                 string         `json:"node"`
	Lease                time.Duration  `json:"lease"`
	PollInterval         time.Duration  `json:"poll_interval"`
	MaxConcurrent        int            `json:"max_concurrent"`
	MaxConcurrentByState map[string]int `json:"max_concurrent_by_state,omitempty"`
	MaxTurns             int            `json:"max_turns"`
	MaxRetryBackoff      time.Duration  `json:"max_retry_backoff"`
}

// Tracker kinds.
const (
	TrackerNative = "native"
	TrackerGitHub = "github"
	TrackerLinear = "linear"
)

// Tracker says where cards come from. With the native tracker the states name
// board columns; with an external one they are the tracker's state names.
type Tracker struct {
	Kind           string   `json:"kind"`
	Endpoint       string   `json:"endpoint,omitempty"`
	APIKey         string   `json:"api_key,omitempty"` // secret
	ProjectSlug    string   `json:"project_slug,omitempty"`
	ActiveStates   []string `json:"active_states"`
	TerminalStates []string `json:"terminal_states"`
}

// Store is where drover keeps its state. An empty DSN means the caller
// decides (the CLI's --store flag or its default beside the config).
type Store struct {
	DSN string `json:"dsn"` // may hold a password: masked by Redacted
}

// Server is the HTTP API and dashboard. Port 0 means off.
type Server struct {
	Host      string `json:"host"`
	Port      int    `json:"port"`
	AuthToken string `json:"auth_token"` // secret
}

// Codex holds Symphony's codex: keys. When agents.profiles is absent,
// codex.command becomes a profile named "codex" of kind codex.
type Codex struct {
	Command      string        `json:"command,omitempty"`
	TurnTimeout  time.Duration `json:"turn_timeout,omitempty"`
	ReadTimeout  time.Duration `json:"read_timeout,omitempty"`
	StallTimeout time.Duration `json:"stall_timeout,omitempty"`
	// Carried for reference only: drover's codex adapter runs `codex exec`
	// and does not apply them (they are also listed in Config.Ignored).
	ApprovalPolicy    string `json:"approval_policy,omitempty"`
	ThreadSandbox     string `json:"thread_sandbox,omitempty"`
	TurnSandboxPolicy any    `json:"turn_sandbox_policy,omitempty"`
}

// SpecSchema returns the compiled JSON Schema of the named profile's
// spec_schema ("" = the default profile), or nil when it has none.
func (c *Config) SpecSchema(profile string) *jsonschema.Schema {
	if profile == "" {
		profile = c.Agents.Default
	}
	return c.schemas[profile]
}

const mask = "****"

func maskIf(s string) string {
	if s == "" {
		return ""
	}
	return mask
}

// Redacted returns a copy safe to print or log: notification URLs, the webhook
// secret, the server token, the tracker API key, profile env values and any
// password in the store DSN are masked.
func (c *Config) Redacted() *Config {
	r := *c
	r.Notify.Slack.URL = maskIf(c.Notify.Slack.URL)
	r.Notify.Webhook.URL = maskIf(c.Notify.Webhook.URL)
	r.Notify.Webhook.Secret = maskIf(c.Notify.Webhook.Secret)
	r.Server.AuthToken = maskIf(c.Server.AuthToken)
	r.Tracker.APIKey = maskIf(c.Tracker.APIKey)
	r.Store.DSN = redactDSN(c.Store.DSN)
	r.Agents.Profiles = make(map[string]agent.Profile, len(c.Agents.Profiles))
	for name, p := range c.Agents.Profiles {
		if len(p.Env) > 0 {
			env := make(map[string]string, len(p.Env))
			for k, v := range p.Env {
				env[k] = maskIf(v)
			}
			p.Env = env
		}
		r.Agents.Profiles[name] = p
	}
	return &r
}

// String is the redacted config as indented JSON.
func (c *Config) String() string {
	b, err := json.MarshalIndent(c.Redacted(), "", "  ")
	if err != nil {
		return "config: " + err.Error()
	}
	return string(b)
}
