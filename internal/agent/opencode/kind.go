package opencode

import (
	"fmt"
	"slices"

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
		ResumeArgs:     ResumeArgs,
		CheckArgs:      CheckArgs,
		MCP:            MCP,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.NewWired(p, newParser, MCP), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }

// CheckArgs refuses a replacement argument list (args_mode: replace) the
// parser cannot read: it must run the run subcommand (without it opencode
// starts its terminal UI) with --format json (without it the output is
// formatted text, and drover would see neither tokens, cost nor errors).
func CheckArgs(args []string) error {
	if !slices.Contains(args, "run") {
		return fmt.Errorf("drops run, without which opencode starts its terminal UI instead of one headless run; start the list with run")
	}
	for i, a := range args {
		if a == "--format=json" || (a == "--format" && i+1 < len(args) && args[i+1] == "json") {
			return nil
		}
	}
	return fmt.Errorf("drops --format json, from which drover reads opencode's tokens, cost, session and errors; add --format json")
}
