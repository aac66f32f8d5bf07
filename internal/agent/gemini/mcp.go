package gemini

import (
	"github.com/drover-dev/drover/internal/agent"
)

// MCP wires drover's MCP server into a Gemini CLI run: a settings file in
// the run's private directory named by GEMINI_CLI_SYSTEM_SETTINGS_PATH (the
// documented override of the system settings file, so the operator's user
// and project settings still apply) with the server under mcpServers,
// trusted (no confirmation; the run is --yolo anyway), its env entries in
// Gemini's $VAR expansion so no value is written down.
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	cfg := map[string]any{"mcpServers": map[string]any{s.Name: map[string]any{
		"command": s.Command, "args": s.Args, "env": agent.MCPEnvRefs(s, "$%s"), "trust": true,
	}}}
	path, err := agent.WriteMCPFile(s, "gemini-settings.json", cfg)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	return agent.MCPWiring{Env: map[string]string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH": path}}, nil
}
