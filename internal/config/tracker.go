package config

import (
	"fmt"
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

var trackerKinds = []string{TrackerNative, TrackerGitHub, TrackerLinear}

func decodeTracker(d *decoder, n *yaml.Node, b board.Board) Tracker {
	t := Tracker{Kind: TrackerNative}
	f := d.fields(n, "tracker", []string{"kind", "endpoint", "api_key", "project_slug", "active_states", "terminal_states"}, lenient)
	if v, ok := f["kind"]; ok {
		t.Kind = d.str(v, "tracker.kind", expandPlain)
		if !contains(trackerKinds, t.Kind) {
			d.errf(deref(v), "tracker.kind", "%q is not a tracker%s; use native (drover's board), github or linear", t.Kind, suggest.DidYouMean(suggest.Closest(t.Kind, trackerKinds)))
		}
	}
	t.Endpoint = d.str(f["endpoint"], "tracker.endpoint", expandPlain)
	t.APIKey = d.str(f["api_key"], "tracker.api_key", expandSecret)
	t.ProjectSlug = d.str(f["project_slug"], "tracker.project_slug", expandPlain)
	t.ActiveStates = d.strList(f["active_states"], "tracker.active_states", expandPlain)
	t.TerminalStates = d.strList(f["terminal_states"], "tracker.terminal_states", expandPlain)
	if t.Kind == TrackerNative {
		if _, ok := f["active_states"]; !ok {
			t.ActiveStates = columnsWith(b, board.RoleEligible, board.RoleRunning)
		}
		if _, ok := f["terminal_states"]; !ok {
			t.TerminalStates = columnsWith(b, board.RoleDone, board.RoleCancelled)
		}
	}
	return t
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
	if cfg.Tracker.Kind == TrackerNative && boardOK {
		for i, s := range cfg.Tracker.ActiveStates {
			p := fmt.Sprintf("tracker.active_states[%d]", i)
			if c, ok := cfg.Board.Column(s); !ok {
				d.errf(at(top, "tracker", "active_states"), p, "%q is not a column on the board (columns: %s)", s, cols)
			} else if c.Role.IsSink() {
				d.errf(at(top, "tracker", "active_states"), p, "%q has role %s, a sink; active states are the columns agents work from (eligible or running)", s, c.Role)
			}
		}
		for i, s := range cfg.Tracker.TerminalStates {
			if _, ok := cfg.Board.Column(s); !ok {
				d.errf(at(top, "tracker", "terminal_states"), fmt.Sprintf("tracker.terminal_states[%d]", i), "%q is not a column on the board (columns: %s)", s, cols)
			}
		}
	}
	if cfg.Tracker.Kind == TrackerLinear && cfg.Tracker.APIKey == "" {
		d.errf(at(top, "tracker"), "tracker.api_key", "missing; the linear tracker needs an API key (e.g. api_key: $LINEAR_API_KEY)")
	}
	if cfg.Tracker.Kind != TrackerNative && cfg.Tracker.Kind != "" && len(cfg.Tracker.ActiveStates) == 0 {
		d.errf(at(top, "tracker"), "tracker.active_states", "missing; list the %s states agents should pick work from", cfg.Tracker.Kind)
	}
}
