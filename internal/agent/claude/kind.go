package claude

import (
	"strconv"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "claude"

// Registration is the claude kind's entry in agent/registry: Claude Code in
// print mode, run through agent/command with this package's parser. A
// profile without args gets DefaultArgs, plus --max-turns when the
// dispatcher caps turns (dispatch.max_turns).
func Registration() agent.Registration {
	return agent.Registration{
		Kind:           Kind,
		Doc:            "runs Claude Code in print mode (claude -p --output-format stream-json) and reads its structured output",
		DefaultCommand: "claude",
		DefaultArgs: func(p agent.Profile) []string {
			args := DefaultArgs()
			if p.MaxTurns > 0 {
				args = append(args, "--max-turns", strconv.Itoa(p.MaxTurns))
			}
			return args
		},
		NewParser:  newParser,
		ResumeArgs: ResumeArgs,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.New(p, newParser), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }
