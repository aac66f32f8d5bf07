// Package registry is the one list of agent kinds. Each kind lives in its own
// package (agent/command, agent/claude, agent/codex, agent/gemini,
// agent/opencode, agent/sim) and describes itself with an
// agent.Registration; the list below is the only place that names them all.
// The config (which kinds a profile may name, which need a command), the
// dispatcher (building an agent, checking a card's spec, looking for a
// program on PATH) and `drover classify` (which parser reads the output) ask
// this package, so adding a kind is one new package and one line here.
//
// It sits apart from package agent because every kind package imports agent
// for the Agent interface; the registry imports them all.
package registry

import (
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/claude"
	"github.com/drover-dev/drover/internal/agent/codex"
	"github.com/drover-dev/drover/internal/agent/command"
	"github.com/drover-dev/drover/internal/agent/gemini"
	"github.com/drover-dev/drover/internal/agent/opencode"
	"github.com/drover-dev/drover/internal/agent/sim"
)

// kinds is every agent kind, in the order errors and documentation list them.
var kinds = []agent.Registration{
	command.Registration(),
	claude.Registration(),
	codex.Registration(),
	gemini.Registration(),
	opencode.Registration(),
	sim.Registration(),
}

// Names returns the kind names, in the registry's order.
func Names() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Kind
	}
	return out
}

// Lookup returns the registration of a kind. An empty kind is the command
// kind (a profile built in code without one runs its program plainly).
func Lookup(kind string) (agent.Registration, bool) {
	if kind == "" {
		kind = command.Kind
	}
	for _, k := range kinds {
		if k.Kind == kind {
			return k, true
		}
	}
	return agent.Registration{}, false
}

// New builds the agent for a profile: the kind's default command and
// arguments fill in what the profile leaves out, then the kind's constructor
// runs.
func New(p agent.Profile) (agent.Agent, error) {
	reg, ok := Lookup(p.Kind)
	if !ok {
		return nil, fmt.Errorf("agents.profiles.%s.kind: %q is not %s", p.Name, p.Kind, orList(Names()))
	}
	return reg.New(WithDefaults(p))
}

// WithDefaults returns p with its kind's default command and arguments
// filled in where it gives none.
func WithDefaults(p agent.Profile) agent.Profile {
	reg, ok := Lookup(p.Kind)
	if !ok {
		return p
	}
	if p.Command == "" {
		p.Command = reg.DefaultCommand
	}
	if len(p.Args) == 0 && reg.DefaultArgs != nil {
		p.Args = reg.DefaultArgs(p)
	}
	return p
}

// ValidateSpec checks a card's spec against what the kind reads from it; nil
// for kinds that read nothing (and for unknown kinds, which fail elsewhere).
func ValidateSpec(kind string, spec []byte) error {
	if reg, ok := Lookup(kind); ok && reg.ValidateSpec != nil {
		return reg.ValidateSpec(spec)
	}
	return nil
}

// InProcess reports whether a kind runs inside drover, with no program to
// find on PATH.
func InProcess(kind string) bool {
	reg, ok := Lookup(kind)
	return ok && reg.InProcess
}

// orList joins names as "a, b, c or d".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
