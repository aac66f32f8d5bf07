package claude

import (
	"strings"

	"github.com/drover-dev/drover/internal/agent"
)

// MCP wires drover's MCP server into a Claude Code run: a config file in
// the run's private directory given to --mcp-config (its env entries use
// Claude Code's ${VAR} expansion, so no value is written down), and
// --allowedTools for the drover tools (mcp__<server>__<tool>), which print
// mode would otherwise deny. The operator's own MCP servers stay as they
// are (no --strict-mcp-config).
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	cfg := map[string]any{"mcpServers": map[string]any{s.Name: map[string]any{
		"type": "stdio", "command": s.Command, "args": s.Args, "env": agent.MCPEnvRefs(s, "${%s}"),
	}}}
	path, err := agent.WriteMCPFile(s, "claude-mcp.json", cfg)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	tools := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		tools[i] = "mcp__" + s.Name + "__" + t
	}
	// Before the profile's arguments: --allowedTools takes several values,
	// so at the end it could swallow a prompt passed as the last argument.
	return agent.MCPWiring{Before: []string{"--mcp-config", path, "--allowedTools", strings.Join(tools, ",")}}, nil
}
