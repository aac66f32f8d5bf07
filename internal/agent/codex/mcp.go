package codex

import (
	"strconv"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
)

// MCP wires drover's MCP server into a Codex run through its documented
// config overrides (-c mcp_servers.<name>.…, TOML values), given before the
// subcommand so the operator's CODEX_HOME and config.toml are never
// touched; the tools are approved in advance. Codex starts stdio servers with a short list of variables;
// env_vars forwards drover's by name, so no value appears in argv.
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	key := "mcp_servers." + s.Name + "."
	return agent.MCPWiring{Before: []string{
		"-c", key + "command=" + strconv.Quote(s.Command),
		"-c", key + "args=" + tomlList(s.Args),
		"-c", key + "env_vars=" + tomlList(s.EnvVars),
		// Codex asks before an MCP tool call, and exec's approval policy
		// never refuses what needs asking; drover's own tools need no one's
		// approval (checked against 0.171.0: "MCP tool call requires
		// approval, but approval policy is never" without this).
		"-c", key + `default_tools_approval_mode="approve"`,
	}}, nil
}

// tomlList is a TOML array of strings (Go's quoting is valid TOML for the
// paths and names drover passes).
func tomlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ",") + "]"
}
