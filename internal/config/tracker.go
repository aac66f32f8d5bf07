package config

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/suggest"
)

// Tracker kinds.
const (
	TrackerNative = "native"
	TrackerGitHub = "github"
	TrackerLinear = "linear"
)

// DefaultGitHubBlockedBy finds "blocked by #12" (any case) in an issue body.
const DefaultGitHubBlockedBy = `(?i)blocked by #(\d+)`

// Tracker says where cards come from. With the native tracker the states name
// board columns; with an external one they are the tracker's state names
// (GitHub: "open", "closed" or a label name; Linear: workflow state names).
type Tracker struct {
	Kind           string   `json:"kind"`
	Endpoint       string   `json:"endpoint,omitempty"`
	APIKey         string   `json:"api_key,omitempty"` // secret
	Repo           string   `json:"repo,omitempty"`    // github: owner/name
	ProjectSlug    string   `json:"project_slug,omitempty"`
	RequiredLabels []string `json:"required_labels,omitempty"`
	ActiveStates   []string `json:"active_states"`
	TerminalStates []string `json:"terminal_states"`
	// Roles says how each column role drover moves a card into shows in
	// the tracker: a label (GitHub) or a state name, "open" or "closed"
	// (GitHub), a workflow state name (Linear). A role without an entry is
	// not projected as a move (its comment, if any, still is).
	Roles map[board.Role]TrackerRole `json:"roles,omitempty"`
	// RolesSet are the roles tracker.roles names (the others are defaults:
	// a default state the tracker lacks is dropped at start, not refused).
	RolesSet []board.Role `json:"-"`
	// BlockedBy (github) is a regular expression whose first group is the
	// number of an issue this one waits on.
	BlockedBy string `json:"blocked_by_pattern,omitempty"`
	// WebhookSecret verifies POST /api/v1/webhooks/<kind> (GitHub's
	// X-Hub-Signature-256, Linear's Linear-Signature); empty turns the
	// webhook off (polling only).
	WebhookSecret string `json:"webhook_secret,omitempty"` // secret
}

// TrackerRole is how one column role shows in an external tracker.
type TrackerRole struct {
	Label string `json:"label,omitempty"`
	State string `json:"state,omitempty"`
}

// External reports whether cards come from an external tracker.
func (t Tracker) External() bool { return t.Kind == TrackerGitHub || t.Kind == TrackerLinear }

var trackerKinds = []string{TrackerNative, TrackerGitHub, TrackerLinear}

// trackerKeys are the tracker: keys drover reads. Symphony's other keys are
// warned about once and ignored.
var trackerKeys = []string{"kind", "endpoint", "api_key", "repo", "project_slug", "provider", "required_labels", "active_states", "terminal_states", "roles", "blocked_by_pattern", "webhook_secret"}

// Role mappings an external tracker starts from.
func defaultRoles(kind string) map[board.Role]TrackerRole {
	switch kind {
	case TrackerGitHub:
		return map[board.Role]TrackerRole{
			board.RoleEligible:  {State: "open"},
			board.RoleRunning:   {Label: "drover:running", State: "open"},
			board.RoleParked:    {Label: "drover:awaiting-input", State: "open"},
			board.RoleCompleted: {Label: "drover:review", State: "open"},
			board.RoleBlocked:   {Label: "drover:blocked", State: "open"},
			board.RoleDone:      {State: "closed"},
		}
	case TrackerLinear:
		return map[board.Role]TrackerRole{
			board.RoleRunning:   {State: "In Progress"},
			board.RoleCompleted: {State: "In Review"},
			board.RoleDone:      {State: "Done"},
		}
	}
	return nil
}

func decodeTracker(d *decoder, n *yaml.Node, b board.Board) Tracker {
	t := Tracker{Kind: TrackerNative}
	f := d.fields(n, "tracker", trackerKeys, lenient)
	if v, ok := f["kind"]; ok {
		t.Kind = d.str(v, "tracker.kind", expandPlain)
		if !contains(trackerKinds, t.Kind) {
			d.errf(deref(v), "tracker.kind", "%q is not a tracker%s; use native (drover's board), github or linear", t.Kind, suggest.DidYouMean(suggest.Closest(t.Kind, trackerKinds)))
		}
	}
	t.Endpoint = d.str(f["endpoint"], "tracker.endpoint", expandPlain)
	t.APIKey = d.str(f["api_key"], "tracker.api_key", expandSecret)
	t.Repo = d.str(f["repo"], "tracker.repo", expandPlain)
	t.ProjectSlug = d.str(f["project_slug"], "tracker.project_slug", expandPlain)
	if pv, ok := f["provider"]; ok {
		pf := d.fields(pv, "tracker.provider", []string{"project_slug"}, lenient)
		if s := d.str(pf["project_slug"], "tracker.provider.project_slug", expandPlain); s != "" {
			if t.ProjectSlug != "" && t.ProjectSlug != s {
				d.errf(deref(pf["project_slug"]), "tracker.provider.project_slug", "is %q but tracker.project_slug is %q; keep one", s, t.ProjectSlug)
			}
			t.ProjectSlug = s
		}
	}
	t.RequiredLabels = d.strList(f["required_labels"], "tracker.required_labels", expandPlain)
	t.ActiveStates = d.strList(f["active_states"], "tracker.active_states", expandPlain)
	t.TerminalStates = d.strList(f["terminal_states"], "tracker.terminal_states", expandPlain)
	t.BlockedBy = d.str(f["blocked_by_pattern"], "tracker.blocked_by_pattern", expandNone)
	t.WebhookSecret = d.str(f["webhook_secret"], "tracker.webhook_secret", expandSecret)
	switch t.Kind {
	case TrackerNative:
		if _, ok := f["active_states"]; !ok {
			t.ActiveStates = columnsWith(b, board.RoleEligible, board.RoleRunning)
		}
		if _, ok := f["terminal_states"]; !ok {
			t.TerminalStates = columnsWith(b, board.RoleDone, board.RoleCancelled)
		}
	case TrackerGitHub:
		if _, ok := f["active_states"]; !ok {
			t.ActiveStates = []string{"open"}
		}
		if _, ok := f["terminal_states"]; !ok {
			t.TerminalStates = []string{"closed"}
		}
		if t.BlockedBy == "" {
			t.BlockedBy = DefaultGitHubBlockedBy
		}
		if t.APIKey == "" {
			t.APIKey = d.envOr("GITHUB_TOKEN")
		}
	case TrackerLinear:
		if _, ok := f["terminal_states"]; !ok {
			t.TerminalStates = []string{"Done", "Canceled", "Cancelled", "Duplicate"}
		}
		if _, ok := f["api_key"]; !ok {
			t.APIKey = d.envOr("LINEAR_API_KEY") // as Symphony does
		}
	}
	if t.External() {
		t.Roles = defaultRoles(t.Kind)
		d.trackerRoles(f["roles"], &t)
	} else if _, ok := f["roles"]; ok {
		d.errf(deref(f["roles"]), "tracker.roles", "is for an external tracker (kind: github or linear); drover's own board has its columns")
	}
	return t
}

func (d *decoder) envOr(name string) string {
	v, _ := d.getenv(name)
	return v
}

// trackerRoles reads tracker.roles: role → {label, state}; an entry replaces
// the default of its role, null removes it.
func (d *decoder) trackerRoles(n *yaml.Node, t *Tracker) {
	names := make([]string, 0, len(board.Roles))
	for _, r := range board.Roles {
		names = append(names, string(r))
	}
	for _, e := range d.entries(n, "tracker.roles") {
		p := "tracker.roles." + e.key
		r := board.Role(e.key)
		if !contains(names, e.key) {
			d.errf(e.knode, p, "%q is not a column role%s; roles: %s", e.key, suggest.DidYouMean(suggest.Closest(e.key, names)), strings.Join(names, ", "))
			continue
		}
		if isNull(deref(e.val)) {
			delete(t.Roles, r)
			t.RolesSet = append(t.RolesSet, r)
			continue
		}
		rf := d.fields(e.val, p, []string{"label", "state"}, strict)
		tr := TrackerRole{Label: d.str(rf["label"], p+".label", expandPlain), State: d.str(rf["state"], p+".state", expandPlain)}
		if t.Kind == TrackerGitHub && tr.State != "" && tr.State != "open" && tr.State != "closed" {
			d.errf(deref(rf["state"]), p+".state", "%q is not a GitHub issue state; use open or closed (or a label:)", tr.State)
		}
		if t.Kind == TrackerLinear && tr.Label != "" {
			d.errf(deref(rf["label"]), p+".label", "labels are not projected to Linear; name a workflow state (state: \"In Review\")")
		}
		t.Roles[r] = tr
		t.RolesSet = append(t.RolesSet, r)
	}
}

// Ready says what keeps drover serve from talking to the tracker: a key
// that is empty (its variable is unset). It is not a load error, so the
// other commands (and drover init) work where the key is not exported.
func (t Tracker) Ready() error {
	if t.APIKey != "" {
		return nil
	}
	switch t.Kind {
	case TrackerLinear:
		return fmt.Errorf("tracker.api_key: missing; the linear tracker needs an API key (api_key: $LINEAR_API_KEY, or export LINEAR_API_KEY)")
	case TrackerGitHub:
		return fmt.Errorf("tracker.api_key: missing; the github tracker needs a token with Issues read and write (api_key: $GITHUB_TOKEN, or export GITHUB_TOKEN)")
	}
	return nil
}

func columnsWith(b board.Board, roles ...board.Role) []string {
	var out []string
	for _, c := range b.Columns {
		for _, r := range roles {
			if c.Role == r {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// validateTrackerStates checks the states named for the native tracker are
// columns of the right kind, and that an external tracker has what it needs.
func validateTrackerStates(d *decoder, cfg *Config, top map[string]*yaml.Node, boardOK bool) {
	cols := strings.Join(cfg.Board.Names(), ", ")
	t := cfg.Tracker
	if t.Kind == TrackerNative && boardOK {
		for i, s := range t.ActiveStates {
			p := fmt.Sprintf("tracker.active_states[%d]", i)
			if c, ok := cfg.Board.Column(s); !ok {
				d.errf(at(top, "tracker", "active_states"), p, "%q is not a column on the board (columns: %s)", s, cols)
			} else if c.Role.IsSink() {
				d.errf(at(top, "tracker", "active_states"), p, "%q has role %s, a sink; active states are the columns agents work from (eligible or running)", s, c.Role)
			}
		}
		for i, s := range t.TerminalStates {
			if _, ok := cfg.Board.Column(s); !ok {
				d.errf(at(top, "tracker", "terminal_states"), fmt.Sprintf("tracker.terminal_states[%d]", i), "%q is not a column on the board (columns: %s)", s, cols)
			}
		}
	}
	switch t.Kind {
	case TrackerLinear:
		if t.ProjectSlug == "" {
			d.errf(at(top, "tracker"), "tracker.provider.project_slug", "missing; name the Linear project to dispatch from (its slug, the end of the project's URL)")
		}
	case TrackerGitHub:
		if owner, name, ok := strings.Cut(t.Repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			d.errf(at(top, "tracker", "repo"), "tracker.repo", "%q is not owner/name; name the repository whose issues drover dispatches (repo: acme/app)", t.Repo)
		}
		if re, err := regexp.Compile(t.BlockedBy); err != nil {
			d.errf(at(top, "tracker", "blocked_by_pattern"), "tracker.blocked_by_pattern", "is not a regular expression: %v", err)
		} else if re.NumSubexp() < 1 {
			d.errf(at(top, "tracker", "blocked_by_pattern"), "tracker.blocked_by_pattern", "has no group; its first group must capture the issue number (e.g. (?i)blocked by #(\\d+))")
		}
	}
	if t.External() && len(t.ActiveStates) == 0 {
		d.errf(at(top, "tracker"), "tracker.active_states", "missing; list the %s states agents should pick work from", t.Kind)
	}
}
