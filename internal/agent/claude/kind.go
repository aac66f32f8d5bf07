package claude

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "claude"

// PassEnv are the variables Claude Code documents for credentials, endpoints
// and model choice (including Bedrock and Vertex); an agent inherits them
// from drover's environment when set.
var PassEnv = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS",
	"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
	"CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR",
	"CLAUDE_CODE_USE_BEDROCK", "AWS_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_APPLICATION_CREDENTIALS",
}

// Registration is the claude kind's entry in agent/registry: Claude Code in
// print mode, run through agent/command with this package's parser. A
// profile's args follow DefaultArgs (plus --max-turns when the dispatcher
// caps turns, dispatch.max_turns); a profile that replaces them must keep
// print mode and a JSON output format (CheckArgs).
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
		CheckArgs:  CheckArgs,
		PassEnv:    PassEnv,
		NewParser:  newParser,
		ResumeArgs: ResumeArgs,
		MCP:        MCP,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.NewWired(p, newParser, MCP), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }

// CheckArgs refuses a replacement argument list the parser cannot read:
// it must keep print mode (-p) and --output-format stream-json (with
// --verbose, which print mode requires for it) or json.
func CheckArgs(args []string) error {
	if !slices.Contains(args, "-p") && !slices.Contains(args, "--print") {
		return fmt.Errorf("drops -p (print mode), without which Claude Code starts its interactive screen; add -p")
	}
	switch format, _ := value(args, "--output-format"); format {
	case "stream-json":
		if !slices.Contains(args, "--verbose") {
			return fmt.Errorf("has --output-format stream-json without --verbose, which Claude Code refuses in print mode; add --verbose")
		}
	case "json":
	default:
		return fmt.Errorf("drops --output-format stream-json, from which drover reads Claude Code's tokens, cost and errors; add --output-format stream-json --verbose")
	}
	return nil
}

// value is the value of flag in args, given as "flag value" or "flag=value".
func value(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}
