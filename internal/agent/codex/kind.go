package codex

import (
	"fmt"
	"slices"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "codex"

// PassEnv are the variables Codex documents for credentials and endpoints;
// an agent inherits them from drover's environment when set. A custom
// model provider's env_key in Codex's config.toml is not among them: name
// it in the profile's env_passthrough.
var PassEnv = []string{"OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_HOME"}

// Registration is the codex kind's entry in agent/registry: `codex exec
// --json`, run through agent/command with this package's parser. A
// profile's args go between DefaultArgs and the final "-" (the prompt on
// stdin); a profile that replaces them must keep exec and --json
// (CheckArgs).
func Registration() agent.Registration {
	return agent.Registration{
		Kind:           Kind,
		Doc:            "runs OpenAI Codex (codex exec --json, prompt on stdin) and reads its JSON events or plain-text errors",
		DefaultCommand: "codex",
		DefaultArgs:    func(agent.Profile) []string { return DefaultArgs() },
		LastArgs:       func(agent.Profile) []string { return []string{"-"} },
		CheckArgs:      CheckArgs,
		PassEnv:        PassEnv,
		NewParser:      newParser,
		ResumeArgs:     ResumeArgs,
		MCP:            MCP,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.NewWired(p, newParser, MCP), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }

// CheckArgs refuses a replacement argument list the parser cannot read:
// it must run the exec subcommand (without it codex starts its interactive
// screen and fails with "stdin is not a terminal") with --json.
func CheckArgs(args []string) error {
	if !slices.Contains(args, "exec") {
		return fmt.Errorf("drops exec, without which Codex starts its interactive screen and fails with \"stdin is not a terminal\"; start the list with exec")
	}
	if !slices.Contains(args, "--json") {
		return fmt.Errorf("drops --json, from which drover reads Codex's tokens and errors; add --json")
	}
	return nil
}
