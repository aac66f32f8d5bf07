package codex

import (
	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "codex"

// Registration is the codex kind's entry in agent/registry: `codex exec
// --json`, run through agent/command with this package's parser.
func Registration() agent.Registration {
	return agent.Registration{
		Kind:           Kind,
		Doc:            "runs OpenAI Codex (codex exec --json, prompt on stdin) and reads its JSON events or plain-text errors",
		DefaultCommand: "codex",
		DefaultArgs:    func(agent.Profile) []string { return DefaultArgs() },
		NewParser:      newParser,
		ResumeArgs:     ResumeArgs,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.New(p, newParser), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }
