// Package board holds drover's board model: columns with roles, cards, runs and
// events, and the pure rules that say which transitions are allowed to whom.
package board

import (
	"fmt"
	"regexp"
	"strings"
)

// Role is what a column means to the dispatcher.
type Role string

// Column roles. blocked, done and cancelled are sinks: automation never moves a
// card out of them; only an operator's resume or reopen does.
const (
	RoleInactive  Role = "inactive"
	RoleEligible  Role = "eligible"
	RoleRunning   Role = "running"
	RoleParked    Role = "parked"
	RoleCompleted Role = "completed"
	RoleBlocked   Role = "blocked"
	RoleDone      Role = "done"
	RoleCancelled Role = "cancelled"
)

// Roles lists every role in a stable order.
var Roles = []Role{RoleInactive, RoleEligible, RoleRunning, RoleParked, RoleCompleted, RoleBlocked, RoleDone, RoleCancelled}

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	for _, k := range Roles {
		if r == k {
			return true
		}
	}
	return false
}

// IsSink reports whether automation must never move a card out of this role.
func (r Role) IsSink() bool { return r == RoleBlocked || r == RoleDone || r == RoleCancelled }

// Column is one column of the board.
type Column struct {
	Name string `json:"name" yaml:"name"`
	Role Role   `json:"role" yaml:"role"`
}

// Board is the ordered set of columns plus the identifier prefix.
type Board struct {
	Prefix  string   `json:"prefix" yaml:"prefix"`
	Columns []Column `json:"columns" yaml:"columns"`
}

// Default returns the board drover uses when the config names none.
func Default() Board {
	return Board{Prefix: "DRV", Columns: []Column{
		{"backlog", RoleInactive},
		{"ready", RoleEligible},
		{"in_progress", RoleRunning},
		{"awaiting_input", RoleParked},
		{"review", RoleCompleted},
		{"done", RoleDone},
		{"blocked", RoleBlocked},
		{"cancelled", RoleCancelled},
	}}
}

var (
	columnName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	prefixRe   = regexp.MustCompile(`^[A-Z][A-Z0-9]{0,9}$`)
)

// Validate checks the board; errors name the config key at fault.
func (b Board) Validate() error {
	if !prefixRe.MatchString(b.Prefix) {
		return fmt.Errorf("board.prefix: %q is not 1-10 upper-case letters or digits starting with a letter (e.g. DRV)", b.Prefix)
	}
	if len(b.Columns) == 0 {
		return fmt.Errorf("board.columns: empty; list the columns with their roles (see drover init)")
	}
	seen := map[string]bool{}
	have := map[Role]bool{}
	for i, c := range b.Columns {
		if !columnName.MatchString(c.Name) {
			return fmt.Errorf("board.columns[%d].name: %q must be lower-case letters, digits and _ (at most 40)", i, c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("board.columns[%d].name: %q appears twice", i, c.Name)
		}
		if !c.Role.Valid() {
			return fmt.Errorf("board.columns[%d].role: %q is not one of %s", i, c.Role, RoleList())
		}
		seen[c.Name] = true
		have[c.Role] = true
	}
	for _, r := range []Role{RoleEligible, RoleRunning, RoleBlocked, RoleDone} {
		if !have[r] {
			return fmt.Errorf("board.columns: no column has role %q; add one (e.g. {name: %s, role: %s})", r, r, r)
		}
	}
	return nil
}

// RoleList is the roles joined for error messages.
func RoleList() string {
	s := make([]string, len(Roles))
	for i, r := range Roles {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// Column returns the column named name.
func (b Board) Column(name string) (Column, bool) {
	for _, c := range b.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// RoleOf returns the role of the named column, or "" if there is none.
func (b Board) RoleOf(name string) Role {
	c, _ := b.Column(name)
	return c.Role
}

// First returns the first column with the role.
func (b Board) First(role Role) (Column, bool) {
	for _, c := range b.Columns {
		if c.Role == role {
			return c, true
		}
	}
	return Column{}, false
}

// Names lists the column names in order.
func (b Board) Names() []string {
	s := make([]string, len(b.Columns))
	for i, c := range b.Columns {
		s[i] = c.Name
	}
	return s
}

// StateError says a state name is not on the board.
func (b Board) StateError(field, state string) error {
	return fmt.Errorf("%s: unknown state %q; the board's columns are %s", field, state, strings.Join(b.Names(), ", "))
}
