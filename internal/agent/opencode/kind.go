package opencode

import (
	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "opencode"

// DefaultArgs are the arguments drover passes to the opencode binary: one
// non-interactive run with raw JSON events. The prompt goes on stdin
// (`opencode run` reads it there when no message argument is given).
func DefaultArgs() []string {
	return []string{"run", "--format", "json"}
}

// PassEnv are opencode's own configuration variables and the provider keys
// its bundled providers read; agents of this kind inherit them from
// drover's environment when set.
var PassEnv = []string{"OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT", "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH",
	"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "OPENROUTER_API_KEY"}

// Registration is the opencode kind's entry in agent/registry: `opencode run
// --format json`, run through agent/command with this package's parser.
func Registration() agent.Registration {
	return agent.Registration{
		Kind:           Kind,
		Doc:            "runs opencode (opencode run --format json, prompt on stdin) and reads its JSON events",
		DefaultCommand: "opencode",
		DefaultArgs:    func(agent.Profile) []string { return DefaultArgs() },
		NewParser:      newParser,
		PassEnv:        PassEnv,
		MCP:            MCP,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.NewWired(p, newParser, MCP), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }
