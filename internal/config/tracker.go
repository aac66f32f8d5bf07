package config

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// tracker checks tracker: and fills in what its kind defaults to; the
// native tracker's states must be columns of the right kind.
func (d *decoder) tracker(f *file, cfg *Config, boardOK bool) {
	t := f.Tracker.Tracker
	d.oneOf("tracker.kind", t.Kind, trackerKinds, "a tracker")
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
	case TrackerNative:
		orDefault("active_states", &t.ActiveStates, columnsWith(cfg.Board, board.RoleEligible, board.RoleRunning)...)
		orDefault("terminal_states", &t.TerminalStates, columnsWith(cfg.Board, board.RoleDone, board.RoleCancelled)...)
	case TrackerGitHub:
		orDefault("active_states", &t.ActiveStates, "open")
		orDefault("terminal_states", &t.TerminalStates, "closed")
		t.BlockedBy = cmp.Or(t.BlockedBy, DefaultGitHubBlockedBy)
		t.APIKey = cmp.Or(t.APIKey, os.Getenv("GITHUB_TOKEN"))
	case TrackerLinear:
		orDefault("terminal_states", &t.TerminalStates, "Done", "Canceled", "Cancelled", "Duplicate")
		if !d.has("tracker.api_key") {
			t.APIKey = os.Getenv("LINEAR_API_KEY") // as Symphony does
		}
	}
	native := t.Kind == TrackerNative && boardOK // its states name columns
	if t.External() {
		t.Roles = defaultRoles(t.Kind)
		d.roles(f.Tracker.Roles, &t)
	} else {
		d.check(!d.has("tracker.roles"), "tracker.roles", "is for an external tracker (kind: github or linear); drover's own board has its columns")
	}
	for i, s := range t.ActiveStates {
		p := fmt.Sprintf("tracker.active_states[%d]", i)
		if c, ok := cfg.Board.Column(s); native && ok {
			d.check(!c.Role.IsSink(), p, "%q has role %s, a sink; active states are the columns agents work from (eligible or running)", s, c.Role)
		} else if native {
			d.column(cfg.Board, p, s)
		}
	}
	for i, s := range t.TerminalStates {
		if native {
			d.column(cfg.Board, fmt.Sprintf("tracker.terminal_states[%d]", i), s)
		}
	}
	switch t.Kind {
	case TrackerLinear:
		d.check(t.ProjectSlug != "", "tracker.provider.project_slug", "missing; name the Linear project to dispatch from (its slug, the end of the project's URL)")
	case TrackerGitHub:
		owner, name, ok := strings.Cut(t.Repo, "/")
		d.check(ok && owner != "" && name != "" && !strings.Contains(name, "/"), "tracker.repo", "%q is not owner/name; name the repository whose issues drover dispatches (repo: acme/app)", t.Repo)
		if re, err := regexp.Compile(t.BlockedBy); err != nil {
			d.errf("tracker.blocked_by_pattern", "is not a regular expression: %v", err)
		} else {
			d.check(re.NumSubexp() > 0, "tracker.blocked_by_pattern", "has no group; its first group must capture the issue number (e.g. (?i)blocked by #(\\d+))")
		}
	}
	d.check(!t.External() || len(t.ActiveStates) > 0, "tracker.active_states", "missing; list the %s states agents should pick work from", t.Kind)
	cfg.Tracker = t
}

// roles applies tracker.roles: role → {label, state}; an entry replaces the
// default of its role, null removes it.
func (d *decoder) roles(given map[board.Role]*TrackerRole, t *Tracker) {
	names := make([]string, len(board.Roles))
	for i, r := range board.Roles {
		names[i] = string(r)
	}
	for _, r := range slices.Sorted(maps.Keys(given)) {
		p, tr := "tracker.roles."+string(r), given[r]
		if !d.oneOf(p, string(r), names, "a column role") {
			continue
		}
		t.RolesSet = append(t.RolesSet, r)
		if tr == nil {
			delete(t.Roles, r)
			continue
		}
		d.check(t.Kind != TrackerGitHub || tr.State == "" || tr.State == "open" || tr.State == "closed", p+".state", "%q is not a GitHub issue state; use open or closed (or a label:)", tr.State)
		d.check(t.Kind != TrackerLinear || tr.Label == "", p+".label", "labels are not projected to Linear; name a workflow state (state: \"In Review\")")
		t.Roles[r] = *tr
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
	ds, a := &f.Dispatch, f.Agent
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
		if t.Kind != TrackerNative {
			d.check(slices.ContainsFunc(t.ActiveStates, func(a string) bool { return strings.EqualFold(a, s) }), p, "%q is not one of tracker.active_states (%s)", s, strings.Join(t.ActiveStates, ", "))
		} else if boardOK {
			d.column(cfg.Board, p, s)
		}
	}
	cfg.Dispatch = *ds
}
