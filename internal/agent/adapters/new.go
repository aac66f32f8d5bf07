package adapters

import (
	"fmt"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
	"github.com/drover-dev/drover/internal/agent/sim"
)

// New builds the agent for a profile: sim runs in process; command, claude
// and codex run the profile's program, the latter two with their CLI's
// default arguments (when the profile gives none) and output parser.
func New(p agent.Profile) (agent.Agent, error) {
	switch p.Kind {
	case "sim":
		return sim.New(), nil
	case "", "command":
		return command.New(p, nil), nil
	case "claude", "codex":
		if len(p.Args) == 0 {
			p.Args = DefaultArgs(p.Kind)
		}
		if p.Command == "" {
			p.Command = p.Kind
		}
		kind := p.Kind
		return command.New(p, func() command.Parser { return NewParser(kind) }), nil
	}
	return nil, fmt.Errorf("agents.profiles.%s.kind: %q is not command, claude, codex or sim", p.Name, p.Kind)
}
