package opencode

import (
	"github.com/drover-dev/drover/internal/agent"
)

// MCP wires drover's MCP server into an opencode run: a config file in the
// run's private directory named by OPENCODE_CONFIG (opencode merges it over
// the operator's global config) with a local server under mcp, its
// environment in opencode's {env:VAR} substitution so no value is written
// down.
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	cfg := map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": map[string]any{s.Name: map[string]any{
		"type": "local", "command": append([]string{s.Command}, s.Args...), "enabled": true,
		"environment": agent.MCPEnvRefs(s, "{env:%s}"),
	}}}
	path, err := agent.WriteMCPFile(s, "opencode.json", cfg)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	return agent.MCPWiring{Env: map[string]string{"OPENCODE_CONFIG": path}}, nil
}
