package agent

import (
	"context"
	"strings"

	"github.com/drover-dev/drover/internal/board"
)

// MCPServer is drover's own MCP server (drover mcp) as a run starts it: the
// program and its arguments, the variables it needs from the run's
// environment (names only: values such as the run's token are never written
// into argv or a config file), a directory private to the run for config
// files, and the tool names the agent may call without asking.
type MCPServer struct {
	Name    string   // the server's name in the agent's config: "drover"
	Command string   // absolute path of the drover binary
	Args    []string // ["mcp"]
	EnvVars []string // DROVER_RUN_ID, DROVER_AGENT_SOCKET, DROVER_AGENT_TOKEN, …
	Dir     string   // private to the run (0700); the kind may write files here
	Tools   []string // drover_card, drover_block, …
	// RunEnv is the run's environment as the profile built it (KEY=VALUE),
	// for a kind whose wiring goes through a variable the operator may
	// have set too (gemini, opencode): the wiring merges with it instead
	// of replacing it.
	RunEnv []string
	// Workspace is the run's working directory, for a kind whose only
	// usable config scope without root is the project's (gemini).
	Workspace string
}

// Getenv is the value of k in the run's environment and whether it is set.
func (s MCPServer) Getenv(k string) (string, bool) {
	for _, kv := range s.RunEnv {
		if key, v, ok := strings.Cut(kv, "="); ok && key == k {
			return v, true
		}
	}
	return "", false
}

// MCPWiring is what a kind adds to a run so that its agent starts drover's
// MCP server: arguments (Before go right after the program, After at the
// end) and environment variables.
type MCPWiring struct {
	Before, After []string
	Env           map[string]string
}

// MCPTools are the tools drover mcp serves, in the order it lists them.
var MCPTools = []string{"drover_card", "drover_ask_human", "drover_block", "drover_comment", "drover_progress", "drover_done"}

// Calls are the agent's own calls about its run (what drover mcp serves,
// agentcall.Service), for agents that run inside drover (the sim): the same
// fenced writes, without the stdio transport.
type Calls interface {
	Block(ctx context.Context, what, where, how string) (board.AgentReport, error)
	Ask(ctx context.Context, question string, options []string) (board.AgentReport, error)
	Done(ctx context.Context, summary string) (board.AgentReport, error)
	Comment(ctx context.Context, text string) (board.Comment, error)
	Progress(ctx context.Context, note string) (board.Event, error)
}
