package codex

import (
	"fmt"
	"slices"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/codex/appserver"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "codex"

// PassEnv are the variables Codex documents for credentials and endpoints;
// an agent inherits them from drover's environment when set. A custom
// model provider's env_key in Codex's config.toml is not among them: name
// it in the profile's env_passthrough.
var PassEnv = []string{"OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_HOME"}

// Registration is the codex kind's entry in agent/registry. By default
// `codex exec --json`, run through agent/command with this package's
// parser: a profile's args go between DefaultArgs and the final "-" (the
// prompt on stdin); a profile that replaces them must keep exec and --json
// (CheckArgs). A profile whose args hold app-server (args: [app-server],
// or Symphony's codex.command: codex app-server) is app-server mode: the
// args are the whole list, and drover speaks the JSON-RPC protocol over
// stdio (package codex/appserver).
func Registration() agent.Registration {
	return agent.Registration{
		Kind:           Kind,
		Doc:            "runs OpenAI Codex (codex exec --json, prompt on stdin) and reads its JSON events or plain-text errors; or speaks codex app-server's JSON-RPC when the args run app-server",
		DefaultCommand: "codex",
		DefaultArgs: func(p agent.Profile) []string {
			if appserver.Mode(p.Args) {
				return nil
			}
			return DefaultArgs()
		},
		LastArgs: func(p agent.Profile) []string {
			if appserver.Mode(p.Args) {
				return nil
			}
			return []string{"-"}
		},
		CheckArgs:  CheckArgs,
		PassEnv:    PassEnv,
		NewParser:  newParser,
		ResumeArgs: ResumeArgs,
		MCP:        MCP,
		New: func(p agent.Profile) (agent.Agent, error) {
			if appserver.Mode(p.Args) {
				// drover's operations are the app-server's dynamic tools.
				return appserver.New(p, Kind), nil
			}
			return command.NewWired(p, newParser, MCP), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }

// CheckArgs refuses a replacement argument list the parser cannot read:
// it must run the exec subcommand (without it codex starts its interactive
// screen and fails with "stdin is not a terminal") with --json, or the
// app-server.
func CheckArgs(args []string) error {
	if appserver.Mode(args) {
		return nil
	}
	if !slices.Contains(args, "exec") {
		return fmt.Errorf("drops exec, without which Codex starts its interactive screen and fails with \"stdin is not a terminal\"; start the list with exec")
	}
	if !slices.Contains(args, "--json") {
		return fmt.Errorf("drops --json, from which drover reads Codex's tokens and errors; add --json")
	}
	return nil
}
