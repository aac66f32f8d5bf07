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

// TrustEnv trusts the workspace for the run (what --skip-trust sets).
const TrustEnv = "GEMINI_CLI_TRUST_WORKSPACE"

// MCP wires drover's MCP server into a Gemini CLI run through the project
// settings of the run's workspace, <workspace>/.gemini/settings.json: the
// server under mcpServers, trusted (no confirmation; the run is --yolo
// anyway), its env entries in Gemini's $VAR expansion so no value is
// written down. Gemini CLI 0.61.0 names the server's tools
// mcp_drover_<tool>. The run gets GEMINI_CLI_TRUST_WORKSPACE=true: what
// drover's --skip-trust says, but in time, since the CLI reads the
// workspace's settings (and drops their MCP servers as untrusted) before
// it applies the flag ("gemini mcp list" shows the server Disabled without
// the variable, Connected with it). A profile that sets the variable to
// anything else is refused: drover's tools need the workspace trusted.
//
// Why the project scope (evidence: Gemini CLI 0.61.0 against the fake
// provider, tests/realcli): the system settings file named by
// GEMINI_CLI_SYSTEM_SETTINGS_PATH (and GEMINI_CLI_SYSTEM_DEFAULTS_PATH) is
// skipped unless it and every directory above it are owned by root and not
// writable by group or others ("Security Warning: Skipping system settings
// file …: Parent directory '/tmp' is insecure"), so it cannot carry a
// run's file; the user scope is the operator's ~/.gemini (moving it with
// GEMINI_CLI_HOME would hide their credentials and sessions, which
// --resume needs); the CLI has no flag that adds a server. The operator's
// system and user settings are left alone.
//
// The workspace is drover's per-card directory. A project settings file
// already there (the repository's own) is merged: every key stays,
// drover's server is added under mcpServers (one of theirs named "drover"
// is replaced). A file that is not a plain JSON object (Gemini CLI also
// accepts comments) is refused with the fix rather than rewritten.
func MCP(s agent.MCPServer) (agent.MCPWiring, error) {
	if v, set := s.Getenv(TrustEnv); set && v != "true" {
		return agent.MCPWiring{}, fmt.Errorf("the profile sets %s=%s, and Gemini CLI loads no MCP server of an untrusted workspace: remove it from the profile's env, or set the profile's mcp: off", TrustEnv, v)
	}
	if s.Workspace == "" {
		return agent.MCPWiring{}, fmt.Errorf("no workspace for the run's gemini project settings")
	}
	path := filepath.Join(s.Workspace, ".gemini", "settings.json")
	cfg, mode, err := projectSettings(path)
	if err != nil {
		return agent.MCPWiring{}, err
	}
	servers, _ := cfg["mcpServers"].(map[string]any)
	if servers == nil {
		if _, set := cfg["mcpServers"]; set {
			return agent.MCPWiring{}, fmt.Errorf("%s: mcpServers is not an object; fix the file or set the profile's mcp: off", path)
		}
		servers = map[string]any{}
	}
	servers[s.Name] = map[string]any{"command": s.Command, "args": s.Args, "env": agent.MCPEnvRefs(s, "$%s"), "trust": true}
	cfg["mcpServers"] = servers
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return agent.MCPWiring{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return agent.MCPWiring{}, err
	}
	if err := os.WriteFile(path, append(b, '\n'), mode); err != nil {
		return agent.MCPWiring{}, err
	}
	return agent.MCPWiring{Env: map[string]string{TrustEnv: "true"}}, nil
}

// projectSettings is the workspace's project settings file as a JSON
// object and the mode to write it with; empty (0600) when there is none.
func projectSettings(path string) (map[string]any, fs.FileMode, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, 0o600, nil
	}
	if err != nil {
		return nil, 0, err
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil || cfg == nil {
		return nil, 0, fmt.Errorf("%s is not a plain JSON object (%v): drover adds its MCP server to the workspace's gemini settings; remove comments and trailing commas, or set the profile's mcp: off", path, err)
	}
	return cfg, mode, nil
}
