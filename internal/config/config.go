// Package config loads drover's WORKFLOW.md: YAML front matter between ---
// lines, then a Liquid prompt template. Keys that Symphony-style workflow files
// use (tracker, polling, workspace, hooks, agent, codex, server) keep their
// meaning; drover's own sections (board, agents, policy, limits, notify,
// dispatch, store, retention, verify) add to them.
//
// The sections are structs whose yaml tags are the keys (sections.go). One
// walk over yaml.v3's node tree decodes the file into them, noting each key
// path's line and reporting unknown keys, typos, duplicates and wrong
// shapes (decode.go); one pass then checks the result and fills in what
// depends on other keys (check.go, agents.go). Every problem names the key
// path, its line and the fix, and all of a file's problems come together.
package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/prompt"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/workspace"
)

// Config is a loaded, validated WORKFLOW.md with every default filled in.
type Config struct {
	Path    string    `json:"path"`     // absolute path of the file ("" when parsed from bytes)
	ModTime time.Time `json:"mod_time"` // of the file when it was read
	Size    int64     `json:"size"`
	Hash    string    `json:"hash"` // sha256 of the file's bytes, hex

	// The sections, with the yaml tags of those the file holds as they are
	// (sections.go).
	Board     board.Board     `json:"board" yaml:"board"`
	Agents    Agents          `json:"agents"`
	Policy    policy.Config   `json:"policy"`
	Limits    Limits          `json:"limits" yaml:"limits"`
	Notify    notify.Config   `json:"notify" yaml:"notify"`
	Workspace Workspace       `json:"workspace" yaml:"workspace" cfg:"lenient"`
	Hooks     workspace.Hooks `json:"hooks"`
	Dispatch  Dispatch        `json:"dispatch" yaml:"dispatch"`
	Tracker   tracker.Config  `json:"tracker"`
	Store     Store           `json:"store"`
	Server    Server          `json:"server" yaml:"server" cfg:"lenient"`
	Codex     Codex           `json:"codex" yaml:"codex" cfg:"lenient"`
	Retention Retention       `json:"retention" yaml:"retention"`
	Verify    Verify          `json:"verify" yaml:"verify"` // runs after a clean exit and decides "done"

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

// Redacted returns a copy safe to print or log: every value tagged
// cfg:"secret" (notification URLs, the webhook secret, the server token, the
// tracker's keys) is masked, and so are the profiles' env values and the
// password in the store DSN.
func (c *Config) Redacted() *Config {
	r := *c
	redact(reflect.ValueOf(&r).Elem())
	r.Store.DSN = store.RedactDSN(c.Store.DSN)
	r.Agents.Profiles = maps.Clone(c.Agents.Profiles)
	for name, p := range r.Agents.Profiles {
		p.Env = maps.Clone(p.Env)
		for k := range p.Env {
			p.Env[k] = "****"
		}
		r.Agents.Profiles[name] = p
	}
	return &r
}

func redact(v reflect.Value) {
	for _, f := range reflect.VisibleFields(v.Type()) {
		if fv := v.FieldByIndex(f.Index); f.IsExported() && fv.Kind() == reflect.Struct {
			redact(fv)
		} else if f.Tag.Get("cfg") == "secret" && fv.Kind() == reflect.String && fv.String() != "" {
			fv.SetString("****")
		}
	}
}

// String is the redacted config as indented JSON.
func (c *Config) String() string {
	b, err := json.MarshalIndent(c.Redacted(), "", "  ")
	if err != nil {
		return "config: " + err.Error()
	}
	return string(b)
}

// compilePrompt compiles the file's body (or prompt.DefaultPrompt when it is
// empty); each template problem is a problem at key path "prompt".
func compilePrompt(d *decoder, cfg *Config) {
	if strings.TrimSpace(cfg.Prompt) == "" {
		cfg.Prompt, cfg.PromptLine = prompt.DefaultPrompt, 0
	}
	tmpl, probs := prompt.Compile(cfg.Prompt, cfg.PromptLine)
	for _, p := range probs {
		d.probs = append(d.probs, Problem{Line: p.Line, Path: "prompt", Msg: p.Msg})
	}
	cfg.tmpl = tmpl
}

// PromptReadsComments reports whether the run prompt may show the
// operators' comments (see prompt.Template.ReadsComments).
func (c *Config) PromptReadsComments() bool { return c.tmpl.ReadsComments() }

// RenderPrompt renders the prompt for one run of card, with what a human
// said since the last attempt (conv: the template's question, answer and
// comments; none for a check of the card's input). A failure (e.g. the
// template reads card.spec.plan and this card's spec has no plan) is a
// *prompt.RenderError naming the variable.
func (c *Config) RenderPrompt(card board.Card, attempt int, runID, workspace string, conv ...prompt.Conversation) (string, error) {
	url := ""
	if c.Server.Port != 0 && card.Identifier != "" {
		url = fmt.Sprintf("http://%s:%d/api/v1/%s", c.Server.Host, c.Server.Port, card.Identifier)
	}
	return c.tmpl.Render(prompt.Vars{Card: card, Attempt: attempt, RunID: runID, Workspace: workspace, URL: url, Agent: cmp.Or(card.Agent, c.Agents.Default), Conversation: append(conv, prompt.Conversation{})[0]})
}
