package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/drover-dev/drover/internal/agent"
)

// SystemSettingsEnv names the file Gemini CLI reads as its system settings
// (highest precedence over user and project settings).
const SystemSettingsEnv = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"

// MCP wires drover's MCP server into a Gemini CLI run: a settings file in
// the run's private directory named by GEMINI_CLI_SYSTEM_SETTINGS_PATH (the
// documented override of the system settings file, so the operator's user
// and project settings still apply) with the server under mcpServers,
// trusted (no confirmation; the run is --yolo anyway), its env entries in
// Gemini's $VAR expansion so no value is written down. Gemini CLI 0.61.0
// names the server's tools mcp_drover_<tool>.
//
// When the profile sets GEMINI_CLI_SYSTEM_SETTINGS_PATH itself, the file
// drover writes is a copy of the operator's with drover's server added
// under mcpServers (a server of the operator's named "drover" is
// replaced): nothing the operator's file says is lost. A file that is not
// a plain JSON object (Gemini CLI also accepts comments) is refused with
// the fix, as is a relative path (drover cannot tell what it is relative
// to).
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	cfg, err := operatorSettings(s)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	servers, _ := cfg["mcpServers"].(map[string]any)
	if servers == nil {
		if _, set := cfg["mcpServers"]; set {
			return agent.MCPWiring{}, fmt.Errorf("%s: mcpServers is not an object; fix the file or set the profile's mcp: off", SystemSettingsEnv)
		}
		servers = map[string]any{}
	}
	servers[s.Name] = map[string]any{"command": s.Command, "args": s.Args, "env": agent.MCPEnvRefs(s, "$%s"), "trust": true}
	cfg["mcpServers"] = servers
	path, err := agent.WriteMCPFile(s, "gemini-settings.json", cfg)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	return agent.MCPWiring{Env: map[string]string{SystemSettingsEnv: path}}, nil
}

// operatorSettings is the system settings file the profile names, as a
// JSON object; empty when it names none or the file does not exist (Gemini
// CLI reads a missing file as no settings).
func operatorSettings(s agent.MCPServer) (map[string]any, error) {
	path, ok := s.Getenv(SystemSettingsEnv)
	if !ok || path == "" {
		return map[string]any{}, nil
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s=%s is relative: drover adds its MCP server to a copy of the file and cannot tell which directory it is relative to; give an absolute path (or set the profile's mcp: off)", SystemSettingsEnv, path)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SystemSettingsEnv, err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil || cfg == nil {
		return nil, fmt.Errorf("%s=%s is not a plain JSON object (%v): drover adds its MCP server to a copy of it; remove comments and trailing commas, or set the profile's mcp: off", SystemSettingsEnv, path, err)
	}
	return cfg, nil
}
