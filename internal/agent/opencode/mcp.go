package opencode

import (
	"encoding/json"
	"fmt"

	"github.com/drover-dev/drover/internal/agent"
)

// ConfigContentEnv is opencode's inline config: JSON merged over every
// config file (global, OPENCODE_CONFIG, the project's), last.
const ConfigContentEnv = "OPENCODE_CONFIG_CONTENT"

// MCP wires drover's MCP server into an opencode run: a local server under
// mcp in OPENCODE_CONFIG_CONTENT, its environment in opencode's {env:VAR}
// substitution so no value is written down. opencode 1.18.33 names the
// server's tools drover_<tool>.
//
// The inline config, not OPENCODE_CONFIG: an operator's profile commonly
// sets OPENCODE_CONFIG (its provider, model, permissions), and a file of
// drover's there would replace theirs for the run. When the profile sets
// OPENCODE_CONFIG_CONTENT too, drover's server is added to the operator's
// JSON (a server of theirs named "drover" is replaced); content that is not
// a JSON object is refused with the fix.
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	cfg := map[string]any{}
	if v, ok := s.Getenv(ConfigContentEnv); ok && v != "" {
		if err := json.Unmarshal([]byte(v), &cfg); err != nil || cfg == nil {
			return agent.MCPWiring{}, fmt.Errorf("%s is not a JSON object (%v): drover adds its MCP server to it; fix the profile's value or set its mcp: off", ConfigContentEnv, err)
		}
	}
	servers, _ := cfg["mcp"].(map[string]any)
	if servers == nil {
		if _, set := cfg["mcp"]; set {
			return agent.MCPWiring{}, fmt.Errorf("%s: mcp is not an object; fix the profile's value or set its mcp: off", ConfigContentEnv)
		}
		servers = map[string]any{}
	}
	servers[s.Name] = map[string]any{
		"type": "local", "command": append([]string{s.Command}, s.Args...), "enabled": true,
		"environment": agent.MCPEnvRefs(s, "{env:%s}"),
	}
	cfg["mcp"] = servers
	b, err := json.Marshal(cfg)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	return agent.MCPWiring{Env: map[string]string{ConfigContentEnv: string(b)}}, nil
}
