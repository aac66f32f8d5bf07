package tracker

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/suggest"
)

// Tracker kinds (tracker.kind).
const (
	KindNative = "native"
	KindGitHub = "github"
	KindLinear = "linear"
)

// Kinds are the values tracker.kind takes.
var Kinds = []string{KindNative, KindGitHub, KindLinear}

// DefaultGitHubBlockedBy finds "blocked by #12" (any case) in an issue body.
const DefaultGitHubBlockedBy = `(?i)blocked by #(\d+)`

// Config is WORKFLOW.md's tracker: section (the config package decodes it
// by these yaml tags): where cards come from. With the native tracker the
// states name board columns; with an external one they are the tracker's
// state names (GitHub: "open", "closed" or a label name; Linear: workflow
// state names).
type Config struct {
	Kind           string   `json:"kind" yaml:"kind"`
	Endpoint       string   `json:"endpoint,omitempty" yaml:"endpoint"`
	APIKey         string   `json:"api_key,omitempty" yaml:"api_key" cfg:"secret"`
	Repo           string   `json:"repo,omitempty" yaml:"repo"` // github: owner/name
	ProjectSlug    string   `json:"project_slug,omitempty" yaml:"project_slug"`
	RequiredLabels []string `json:"required_labels,omitempty" yaml:"required_labels"`
	ActiveStates   []string `json:"active_states" yaml:"active_states"`
	TerminalStates []string `json:"terminal_states" yaml:"terminal_states"`
	// Roles says how each column role drover moves a card into shows in
	// the tracker: a label (GitHub) or a state name, "open" or "closed"
	// (GitHub), a workflow state name (Linear). A role without an entry is
	// not projected as a move (its comment, if any, still is).
	Roles map[board.Role]RoleMapping `json:"roles,omitempty"`
	// RolesSet are the roles tracker.roles names (the others are defaults:
	// a default state the tracker lacks is dropped at start, not refused).
	RolesSet []board.Role `json:"-"`
	// BlockedBy (github) is a regular expression whose first group is the
	// number of an issue this one waits on.
	BlockedBy string `json:"blocked_by_pattern,omitempty" yaml:"blocked_by_pattern" cfg:"verbatim"`
	// WebhookSecret verifies POST /api/v1/webhooks/<kind> (GitHub's
	// X-Hub-Signature-256, Linear's Linear-Signature); empty turns the
	// webhook off (polling only).
	WebhookSecret string `json:"webhook_secret,omitempty" yaml:"webhook_secret" cfg:"secret"`
}

// RoleMapping is how one column role shows in an external tracker.
type RoleMapping struct {
	Label string `json:"label,omitempty" yaml:"label"`
	State string `json:"state,omitempty" yaml:"state"`
}

// External reports whether cards come from an external tracker.
func (t Config) External() bool { return t.Kind == KindGitHub || t.Kind == KindLinear }

// Ready says what keeps drover serve from talking to the tracker: a key
// that is empty (its variable is unset). It is not a load error, so the
// other commands (and drover init) work where the key is not exported.
func (t Config) Ready() error {
	switch {
	case t.APIKey != "" || !t.External():
		return nil
	case t.Kind == KindLinear:
		return errors.New("tracker.api_key: missing; the linear tracker needs an API key (api_key: $LINEAR_API_KEY, or export LINEAR_API_KEY)")
	}
	return errors.New("tracker.api_key: missing; the github tracker needs a token with Issues read and write (api_key: $GITHUB_TOKEN, or export GITHUB_TOKEN)")
}

// DefaultRoles are the role mappings an external tracker starts from.
func DefaultRoles(kind string) map[board.Role]RoleMapping {
	if kind == KindLinear {
		return map[board.Role]RoleMapping{board.RoleRunning: {State: "In Progress"}, board.RoleCompleted: {State: "In Review"}, board.RoleDone: {State: "Done"}}
	}
	return map[board.Role]RoleMapping{
		board.RoleEligible:  {State: "open"},
		board.RoleRunning:   {Label: "drover:running", State: "open"},
		board.RoleParked:    {Label: "drover:awaiting-input", State: "open"},
		board.RoleCompleted: {Label: "drover:review", State: "open"},
		board.RoleBlocked:   {Label: "drover:blocked", State: "open"},
		board.RoleDone:      {State: "closed"},
	}
}

// Check is the load-time check of what an external kind needs, each error
// "KEY: message" under tracker.; it fills in GitHub's defaults (the
// blocked-by pattern, $GITHUB_TOKEN).
func (t *Config) Check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch t.Kind {
	case KindGitHub:
		t.BlockedBy, t.APIKey = cmp.Or(t.BlockedBy, DefaultGitHubBlockedBy), cmp.Or(t.APIKey, os.Getenv("GITHUB_TOKEN"))
		if owner, name, ok := strings.Cut(t.Repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			bad("repo: %q is not owner/name; name the repository whose issues drover dispatches (repo: acme/app)", t.Repo)
		}
		if re, err := regexp.Compile(t.BlockedBy); err != nil {
			bad("blocked_by_pattern: is not a regular expression: %v", err)
		} else if re.NumSubexp() == 0 {
			bad("blocked_by_pattern: has no group; its first group must capture the issue number (e.g. (?i)blocked by #(\\d+))")
		}
	case KindLinear:
		if t.ProjectSlug == "" {
			bad("provider.project_slug: missing; name the Linear project to dispatch from (its slug, the end of the project's URL)")
		}
	}
	return errors.Join(errs...)
}

// SetRoles applies tracker.roles over the kind's DefaultRoles: an entry
// replaces the default of its role, null removes it. Each error is
// "KEY: message" under tracker..
func (t *Config) SetRoles(given map[board.Role]*RoleMapping) error {
	var errs []error
	names := make([]string, len(board.Roles))
	for i, r := range board.Roles {
		names[i] = string(r)
	}
	t.Roles = DefaultRoles(t.Kind)
	for _, r := range slices.Sorted(maps.Keys(given)) {
		p, m := "roles."+string(r), given[r]
		switch {
		case !slices.Contains(board.Roles, r):
			errs = append(errs, fmt.Errorf("%s: %q is not a column role%s; use one of %s", p, r, suggest.DidYouMean(suggest.Closest(string(r), names)), strings.Join(names, ", ")))
			continue
		case m == nil:
			delete(t.Roles, r)
		case t.Kind == KindGitHub && m.State != "" && m.State != "open" && m.State != "closed":
			errs = append(errs, fmt.Errorf("%s.state: %q is not a GitHub issue state; use open or closed (or a label:)", p, m.State))
		case t.Kind == KindLinear && m.Label != "":
			errs = append(errs, fmt.Errorf("%s.label: labels are not projected to Linear; name a workflow state (state: \"In Review\")", p))
		}
		t.RolesSet = append(t.RolesSet, r)
		if m != nil {
			t.Roles[r] = *m
		}
	}
	return errors.Join(errs...)
}
