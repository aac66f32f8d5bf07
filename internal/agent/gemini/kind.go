package gemini

import (
	"fmt"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/command"
)

// Kind is the agent kind of this package.
const Kind = "gemini"

// DefaultArgs are the arguments drover passes to the gemini binary. The
// prompt goes on stdin: with stdin not a terminal Gemini CLI runs headless
// and reads the prompt from there. --skip-trust because drover's workspace
// is a fresh folder the CLI has never trusted (headless it otherwise exits
// 55, "not running in a trusted directory"); --yolo because headless there
// is nobody to approve a tool call, and without it the CLI leaves out the
// tools that edit files or run commands.
func DefaultArgs() []string {
	return []string{"--output-format", "stream-json", "--skip-trust", "--yolo"}
}

// PassEnv are the variables Gemini CLI documents (docs/reference/
// configuration.md, 0.61.0) for credentials, auth choice, endpoints, the
// model and its home: agents of this kind inherit them from drover's
// environment when set.
var PassEnv = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_GENAI_USE_GCA", "GOOGLE_VERTEX_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
	"GOOGLE_APPLICATION_CREDENTIALS", "GEMINI_MODEL", "GEMINI_CLI_HOME"}

// Registration is the gemini kind's entry in agent/registry: Gemini CLI in
// headless mode, run through agent/command with this package's parser.
func Registration() agent.Registration {
	return agent.Registration{
		Kind:           Kind,
		Doc:            "runs Gemini CLI headless (gemini --output-format stream-json, prompt on stdin) and reads its JSON events",
		DefaultCommand: "gemini",
		DefaultArgs:    func(agent.Profile) []string { return DefaultArgs() },
		NewParser:      newParser,
		CheckArgs:      CheckArgs,
		PassEnv:        PassEnv,
		ResumeArgs:     ResumeArgs,
		MCP:            MCP,
		New: func(p agent.Profile) (agent.Agent, error) {
			return command.NewWired(p, newParser, MCP), nil
		},
	}
}

func newParser() agent.Parser { return NewParser() }

// CheckArgs refuses a replacement argument list (args_mode: replace) the
// parser cannot read: it must keep --output-format stream-json (or -o
// stream-json; gemini --help, 0.61.0). Without it Gemini CLI prints text
// (or, with json, one object at the end), and drover would see neither
// tokens, the session nor the typed errors it classifies by.
func CheckArgs(args []string) error {
	for i, a := range args {
		switch {
		case a == "--output-format=stream-json" || a == "-o=stream-json":
			return nil
		case (a == "--output-format" || a == "-o") && i+1 < len(args) && args[i+1] == "stream-json":
			return nil
		}
	}
	return fmt.Errorf("drops --output-format stream-json, from which drover reads Gemini CLI's tokens, session and errors; add --output-format stream-json")
}
