package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
)

// Each program-running kind wires drover mcp in its documented way, into
// the run's private directory, naming variables and never their values.
func TestMCPWiringPerKind(t *testing.T) {
	s := agent.MCPServer{Name: "drover", Command: "/opt/drover/bin/drover", Args: []string{"mcp"},
		EnvVars: []string{"DROVER_RUN_ID", "DROVER_STORE"}, Tools: agent.MCPTools}
	read := func(t *testing.T, path string) map[string]any {
		t.Helper()
		if !strings.HasPrefix(path, s.Dir) {
			t.Fatalf("config %s is not in the run's private dir %s", path, s.Dir)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	cases := map[string]func(t *testing.T, w agent.MCPWiring){
		"claude": func(t *testing.T, w agent.MCPWiring) {
			if len(w.Before) != 4 || w.Before[0] != "--mcp-config" || w.Before[2] != "--allowedTools" {
				t.Fatalf("args %v", w.Before)
			}
			if !strings.Contains(w.Before[3], "mcp__drover__drover_block") || strings.Count(w.Before[3], ",") != len(agent.MCPTools)-1 {
				t.Errorf("--allowedTools %s", w.Before[3])
			}
			m := read(t, w.Before[1])
			srv := m["mcpServers"].(map[string]any)["drover"].(map[string]any)
			if srv["command"] != s.Command || srv["type"] != "stdio" || srv["env"].(map[string]any)["DROVER_STORE"] != "${DROVER_STORE}" {
				t.Errorf("server %v", srv)
			}
		},
		"codex": func(t *testing.T, w agent.MCPWiring) {
			got := strings.Join(w.Before, " ")
			want := `-c mcp_servers.drover.command="/opt/drover/bin/drover" -c mcp_servers.drover.args=["mcp"] -c mcp_servers.drover.env_vars=["DROVER_RUN_ID","DROVER_STORE"] -c mcp_servers.drover.default_tools_approval_mode="approve"`
			if got != want {
				t.Errorf("args\n %s\nwant\n %s", got, want)
			}
		},
		"gemini": func(t *testing.T, w agent.MCPWiring) {
			m := read(t, w.Env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"])
			srv := m["mcpServers"].(map[string]any)["drover"].(map[string]any)
			if srv["command"] != s.Command || srv["trust"] != true || srv["env"].(map[string]any)["DROVER_RUN_ID"] != "$DROVER_RUN_ID" {
				t.Errorf("server %v", srv)
			}
		},
		"opencode": func(t *testing.T, w agent.MCPWiring) {
			m := read(t, w.Env["OPENCODE_CONFIG"])
			srv := m["mcp"].(map[string]any)["drover"].(map[string]any)
			cmd := srv["command"].([]any)
			if srv["type"] != "local" || len(cmd) != 2 || cmd[0] != s.Command || cmd[1] != "mcp" ||
				srv["environment"].(map[string]any)["DROVER_STORE"] != "{env:DROVER_STORE}" {
				t.Errorf("server %v", srv)
			}
		},
	}
	for _, name := range Names() {
		reg, _ := Lookup(name)
		check, wired := cases[name]
		if (reg.MCP != nil) != wired {
			t.Errorf("kind %s: MCP wiring present = %v, want %v", name, reg.MCP != nil, wired)
			continue
		}
		if !wired {
			continue
		}
		t.Run(name, func(t *testing.T) {
			s.Dir = filepath.Join(t.TempDir(), "run.mcp")
			w, err := reg.MCP(s)
			if err != nil {
				t.Fatal(err)
			}
			check(t, w)
			if fi, err := os.Stat(s.Dir); err == nil && fi.Mode().Perm() != 0o700 {
				t.Errorf("private dir mode %v, want 0700", fi.Mode().Perm())
			}
		})
	}
}
