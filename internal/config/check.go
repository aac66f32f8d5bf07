package config

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/suggest"
	"github.com/drover-dev/drover/internal/tracker"
	"github.com/drover-dev/drover/internal/workspace"
)

// build is the one validation pass: it checks the decoded file and fills
// cfg from it, with the defaults that depend on other keys and Symphony's
// migrations. Each problem names the key path; the decoder finds its line.
func (d *decoder) build(f *file, baseDir string) {
	cfg := &f.Config
	boardOK := true
	if err := cfg.Board.Validate(); err != nil {
		d.report("", err)
		boardOK = false
	}
	d.tracker(f, cfg, boardOK)
	d.dispatch(f, cfg, boardOK)
	d.policy(f, cfg, boardOK)
	d.limits(&cfg.Limits)
	d.report("notify.", cfg.Notify.Check())
	cfg.Workspace.Root = resolvePath(cmp.Or(cfg.Workspace.Root, ".drover/workspaces"), baseDir)
	if err := workspace.CheckRoot(cfg.Workspace.Root, baseDir); err != nil {
		d.errf("workspace.root", "%v", err)
	}
	d.oneOf("workspace.cleanup", cfg.Workspace.Cleanup, workspace.Cleanups, "a cleanup mode")
	d.git(cfg.Workspace.Git, baseDir)
	alias(d, "hooks.timeout", &f.Hooks.Timeout, "hooks.timeout_ms", f.Hooks.SymphonyTimeout)
	cfg.Hooks = f.Hooks.Hooks
	d.check(cfg.Hooks.Timeout > 0, "hooks.timeout", "0 is not allowed; hooks need a time limit (e.g. 60s)")
	d.store(&f.Store, cfg, baseDir)
	s := &cfg.Server
	s.Host = cmp.Or(s.Host, "127.0.0.1")
	d.check(s.Port >= 0 && s.Port <= 65535, "server.port", "%d is out of range; use 1-65535, or 0 to turn the server off", s.Port)
	for _, r := range []struct {
		key string
		x   time.Duration
	}{{"events", cfg.Retention.Events}, {"runs", cfg.Retention.Runs}, {"logs", cfg.Retention.Logs}} {
		d.check(r.x == 0 || r.x >= time.Hour, "retention."+r.key, "%s is shorter than an hour (a slip for days?); write days (90d), a Go duration (720h), or 0 / forever to keep everything", r.x)
	}
	d.verify("verify", cfg.Verify)
	d.agents(f, cfg)
	d.sandboxes(cfg, baseDir)
}

// oneOf reports s unless list holds it, suggesting the closest.
func (d *decoder) oneOf(path, s string, list []string, what string) bool {
	if slices.Contains(list, s) {
		return true
	}
	d.errf(path, "%q is not %s%s; use one of %s", s, what, suggest.DidYouMean(suggest.Closest(s, list)), strings.Join(list, ", "))
	return false
}

// report adds the problems another package's Validate found: each error
// (one, or several joined) reads "KEY.PATH: message", the path under prefix.
func (d *decoder) report(prefix string, err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if e != nil {
			path, msg, _ := strings.Cut(e.Error(), ": ")
			d.errf(prefix+path, "%s", msg)
		}
	}
}

func (d *decoder) atLeast(path string, x, least int) {
	d.check(x >= least, path, "%d is not allowed; use %d or more", x, least)
}

func (d *decoder) positive(path string, x time.Duration) {
	d.check(x > 0, path, "0 is not allowed; use a positive duration such as 1m")
}

// column is the board's column name, reported at path when there is none.
func (d *decoder) column(b board.Board, path, name string) (board.Column, bool) {
	c, ok := b.Column(name)
	d.check(ok, path, "%q is not a column on the board (columns: %s)", name, strings.Join(b.Names(), ", "))
	return c, ok
}

// policy fills Config.Policy in from the file: a kind's entry replaces its
// default's cap and schedule where it gives them, its backoff fills in
// over policy.backoff. policy.Config.Validate checks the result.
func (d *decoder) policy(f *file, cfg *Config, boardOK bool) {
	pc := &cfg.Policy
	for _, k := range slices.Sorted(maps.Keys(f.Policy.Kinds)) {
		kf, kp, p := f.Policy.Kinds[k], pc.Kinds[k], "policy.kinds."+string(k)
		kp.Cap = cmp.Or(kf.Cap, kp.Cap)
		if d.has(p+".tiers") || d.has(p+".backoff") {
			kp.Tiers, kp.Backoff = kf.Tiers, nil
		}
		if d.has(p + ".backoff") {
			b := pc.Backoff
			d.decode(&kf.Backoff, reflect.ValueOf(&b).Elem(), p+".backoff", "")
			kp.Backoff = &b
		}
		pc.Kinds[k] = kp
	}
	if c, ok := cfg.Board.First(board.RoleBlocked); ok && !d.has("policy.failed_state") {
		pc.FailedState = c.Name
	}
	// Symphony's retry-backoff cap applies when policy.backoff.max is unset.
	if !d.has("policy.backoff.max") && d.has(d.rename("dispatch.max_retry_backoff")) {
		pc.Backoff.Max = max(cfg.Dispatch.MaxRetryBackoff, pc.Backoff.Base)
	}
	b := &cfg.Board
	if !boardOK {
		b = nil // its columns are refused already
	}
	d.report("", pc.Validate(b))
}

func (d *decoder) limits(l *Limits) {
	const fix = "%v is negative; use 0 for %s or a positive amount in USD"
	d.check(l.MaxCostPerDayUSD >= 0, "limits.max_cost_per_day_usd", fix, l.MaxCostPerDayUSD, "no limit")
	d.check(l.MaxCostPerCardUSD >= 0, "limits.max_cost_per_card_usd", fix, l.MaxCostPerCardUSD, "no limit")
	d.check(l.EstimatedCostPerRunUSD >= 0, "limits.estimated_cost_per_run_usd", fix, l.EstimatedCostPerRunUSD, "the average of recent runs")
}

// store reads store: as a DSN or {dsn: …}; a relative sqlite path is
// relative to WORKFLOW.md.
func (d *decoder) store(n *yaml.Node, cfg *Config, baseDir string) {
	if n.Kind == yaml.MappingNode {
		d.decode(n, reflect.ValueOf(&cfg.Store).Elem(), "store", "")
	} else {
		d.decode(n, reflect.ValueOf(&cfg.Store.DSN).Elem(), "store", `cfg:"secret"`)
	}
	dsn := cfg.Store.DSN
	if rest, ok := strings.CutPrefix(dsn, "sqlite:"); ok && rest != "" && !strings.HasPrefix(rest, "file:") && rest != ":memory:" {
		cfg.Store.DSN = "sqlite:" + resolvePath(rest, baseDir)
	} else if dsn != "" && !strings.HasPrefix(dsn, "sqlite:") && !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		d.errf("store", "is not a store address; use sqlite:PATH or postgres://USER@HOST/DB")
	}
}

func (d *decoder) verify(path string, v Verify) {
	for i, c := range v.Commands {
		d.check(c != "", fmt.Sprintf("%s.commands[%d]", path, i), "is empty; give a shell command such as `go test ./...`, or remove it")
	}
	d.positive(path+".timeout", v.Timeout)
}

// tracker checks tracker: and fills in what its kind defaults to; the
// native tracker's states must be columns of the right kind.
func (d *decoder) tracker(f *file, cfg *Config, boardOK bool) {
	t := &cfg.Tracker
	*t = f.Tracker.Config
	d.oneOf("tracker.kind", t.Kind, tracker.Kinds, "a tracker")
	if s := f.Tracker.Provider.ProjectSlug; s != "" {
		d.check(t.ProjectSlug == "" || t.ProjectSlug == s, "tracker.provider.project_slug", "is %q but tracker.project_slug is %q; keep one", s, t.ProjectSlug)
		t.ProjectSlug = s
	}
	orDefault := func(key string, list *[]string, def ...string) {
		if !d.has("tracker." + key) {
			*list = def
		}
	}
	switch t.Kind {
	case tracker.KindNative:
		orDefault("active_states", &t.ActiveStates, columnsWith(cfg.Board, board.RoleEligible, board.RoleRunning)...)
		orDefault("terminal_states", &t.TerminalStates, columnsWith(cfg.Board, board.RoleDone, board.RoleCancelled)...)
		if !boardOK {
			break // its states name the columns of a board that is refused
		}
		for i, s := range t.ActiveStates {
			p := fmt.Sprintf("tracker.active_states[%d]", i)
			if c, ok := d.column(cfg.Board, p, s); ok {
				d.check(!c.Role.IsSink(), p, "%q has role %s, a sink; active states are the columns agents work from (eligible or running)", s, c.Role)
			}
		}
		for i, s := range t.TerminalStates {
			d.column(cfg.Board, fmt.Sprintf("tracker.terminal_states[%d]", i), s)
		}
	case tracker.KindGitHub:
		orDefault("active_states", &t.ActiveStates, "open")
		orDefault("terminal_states", &t.TerminalStates, "closed")
	case tracker.KindLinear:
		orDefault("terminal_states", &t.TerminalStates, "Done", "Canceled", "Cancelled", "Duplicate")
		if !d.has("tracker.api_key") {
			t.APIKey = os.Getenv("LINEAR_API_KEY") // as Symphony does
		}
	}
	d.report("tracker.", t.Check())
	if t.External() {
		d.report("tracker.", t.SetRoles(f.Tracker.Roles))
		d.check(len(t.ActiveStates) > 0, "tracker.active_states", "missing; list the %s states agents should pick work from", t.Kind)
	} else {
		d.check(!d.has("tracker.roles"), "tracker.roles", "is for an external tracker (kind: github or linear); drover's own board has its columns")
	}
}

func columnsWith(b board.Board, roles ...board.Role) []string {
	var out []string
	for _, c := range b.Columns {
		if slices.Contains(roles, c.Role) {
			out = append(out, c.Name)
		}
	}
	return out
}

// dispatch checks dispatch:, taking Symphony's polling: and agent: keys
// for those it does not give (giving both is an error).
func (d *decoder) dispatch(f *file, cfg *Config, boardOK bool) {
	ds, a := &cfg.Dispatch, f.Agent
	alias(d, "dispatch.poll_interval", &ds.PollInterval, "polling.interval_ms", f.Polling.Interval)
	alias(d, "dispatch.max_concurrent", &ds.MaxConcurrent, "agent.max_concurrent_agents", a.MaxConcurrent)
	alias(d, "dispatch.max_turns", &ds.MaxTurns, "agent.max_turns", a.MaxTurns)
	alias(d, "dispatch.max_retry_backoff", &ds.MaxRetryBackoff, "agent.max_retry_backoff_ms", a.MaxRetryBackoff)
	alias(d, "dispatch.max_concurrent_by_state", &ds.MaxConcurrentByState, "agent.max_concurrent_agents_by_state", a.ByState)
	if ds.Node == "" {
		ds.Node, _ = os.Hostname()
		ds.Node = cmp.Or(ds.Node, "drover")
	}
	d.check(ds.Lease >= 3*time.Second, "dispatch.lease", "%s is too short; use at least 3s (the heartbeat runs at a third of it)", ds.Lease)
	d.check(ds.PollInterval >= 100*time.Millisecond, "dispatch.poll_interval", "%s is too short; poll at most every 100ms", ds.PollInterval)
	d.atLeast("dispatch.max_concurrent", ds.MaxConcurrent, 1)
	d.atLeast("dispatch.max_turns", ds.MaxTurns, 1)
	t := cfg.Tracker
	for _, s := range slices.Sorted(maps.Keys(ds.MaxConcurrentByState)) {
		p, n := "dispatch.max_concurrent_by_state."+s, ds.MaxConcurrentByState[s]
		d.check(n >= 1, p, "%d is not allowed; use 1 or more (move the state out of active_states to stop it)", n)
		if t.Kind != tracker.KindNative {
			d.check(slices.ContainsFunc(t.ActiveStates, func(a string) bool { return strings.EqualFold(a, s) }), p, "%q is not one of tracker.active_states (%s)", s, strings.Join(t.ActiveStates, ", "))
		} else if boardOK {
			d.column(cfg.Board, p, s)
		}
	}
}
