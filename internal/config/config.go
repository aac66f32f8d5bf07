// Package config loads drover's WORKFLOW.md: YAML front matter between ---
// lines, then a Liquid prompt template. Keys that Symphony-style workflow files
// use (tracker, polling, workspace, hooks, agent, codex, server) keep their
// meaning; drover's own sections (board, agents, policy, limits, notify,
// dispatch, store) add to them. Every error names the key path at fault and
// the fix.
package config

import (
	"cmp"
	"encoding/json"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/store"
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
	Retention Retention     `json:"retention"`
	// Verify runs after a clean exit and decides "done" (verify.go).
	Verify Verify `json:"verify"`

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
	// Verify holds the profiles' own verify steps
	// (agents.profiles.NAME.verify), by profile name.
	Verify map[string]Verify `json:"verify,omitempty"`
}

// Profile returns the named profile, or the default one for "".
func (a Agents) Profile(name string) (agent.Profile, bool) {
	p, ok := a.Profiles[cmp.Or(name, a.Default)]
	return p, ok
}

// VerifyFor is the verify step of a profile's runs: the profile's own
// (agents.profiles.NAME.verify) when it has one, else the top-level verify:.
func (c *Config) VerifyFor(profile string) Verify {
	if v, ok := c.Agents.Verify[cmp.Or(profile, c.Agents.Default)]; ok {
		return v
	}
	return c.Verify
}

// SpecSchema returns the compiled JSON Schema of the named profile's
// spec_schema ("" = the default profile), or nil when it has none.
func (c *Config) SpecSchema(profile string) *jsonschema.Schema {
	return c.schemas[cmp.Or(profile, c.Agents.Default)]
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
	r.Tracker.WebhookSecret = maskIf(c.Tracker.WebhookSecret)
	r.Store.DSN = store.RedactDSN(c.Store.DSN)
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
