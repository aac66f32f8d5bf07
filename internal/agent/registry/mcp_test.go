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
			if len(w.Env) != 1 || w.Env["GEMINI_CLI_TRUST_WORKSPACE"] != "true" || len(w.Before)+len(w.After) != 0 {
				t.Errorf("wiring %+v, want only GEMINI_CLI_TRUST_WORKSPACE=true: the server is in the workspace's project settings", w)
			}
			var m map[string]any
			b, err := os.ReadFile(filepath.Join(s.Workspace, ".gemini", "settings.json"))
			if err != nil || json.Unmarshal(b, &m) != nil {
				t.Fatalf("project settings %s: %v", b, err)
			}
			srv := m["mcpServers"].(map[string]any)["drover"].(map[string]any)
			if srv["command"] != s.Command || srv["trust"] != true || srv["env"].(map[string]any)["DROVER_RUN_ID"] != "$DROVER_RUN_ID" {
				t.Errorf("server %v", srv)
			}
		},
		"opencode": func(t *testing.T, w agent.MCPWiring) {
			if _, set := w.Env["OPENCODE_CONFIG"]; set {
				t.Errorf("the wiring sets OPENCODE_CONFIG, the operator's own config file")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(w.Env["OPENCODE_CONFIG_CONTENT"]), &m); err != nil {
				t.Fatalf("OPENCODE_CONFIG_CONTENT: %v", err)
			}
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
			s.Workspace = t.TempDir()
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

// A profile that sets the variable a kind wires through keeps what it
// says: drover's server is added to the operator's settings, and settings
// drover cannot merge are refused with the variable's name.
func TestMCPWiringMergesTheOperatorsConfig(t *testing.T) {
	dir := t.TempDir()
	s := agent.MCPServer{Name: "drover", Command: "/opt/drover/bin/drover", Args: []string{"mcp"},
		EnvVars: []string{"DROVER_RUN_ID"}, Tools: agent.MCPTools, Dir: filepath.Join(dir, "run.mcp")}
	gemini, _ := Lookup("gemini")
	opencode, _ := Lookup("opencode")

	// The repository's own project settings keep every key.
	s.Workspace = filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(s.Workspace, ".gemini"), 0o755)
	own := filepath.Join(s.Workspace, ".gemini", "settings.json")
	if err := os.WriteFile(own, []byte(`{"general":{"maxAttempts":1},"mcpServers":{"github":{"command":"gh-mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gemini.MCP(s); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	b, _ := os.ReadFile(own)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	servers := m["mcpServers"].(map[string]any)
	if m["general"].(map[string]any)["maxAttempts"] != 1.0 || servers["github"] == nil || servers["drover"] == nil {
		t.Errorf("merged gemini settings %s, want the project's keys and server beside drover's", b)
	}

	s.RunEnv = []string{`OPENCODE_CONFIG_CONTENT={"model":"fake/gpt-fake","mcp":{"github":{"type":"remote","url":"https://x"}}}`}
	w, err := opencode.MCP(s)
	if err != nil {
		t.Fatal(err)
	}
	m = nil
	if err := json.Unmarshal([]byte(w.Env["OPENCODE_CONFIG_CONTENT"]), &m); err != nil {
		t.Fatal(err)
	}
	if m["model"] != "fake/gpt-fake" || m["mcp"].(map[string]any)["github"] == nil || m["mcp"].(map[string]any)["drover"] == nil {
		t.Errorf("merged opencode content %v, want the operator's keys and server beside drover's", m)
	}

	refused := []struct {
		kind, env, want string
	}{
		{"gemini", "// mine\n{}", "not a plain JSON object"},
		{"gemini", `{"mcpServers":[]}`, "mcpServers is not an object"},
		{"gemini-env", "GEMINI_CLI_TRUST_WORKSPACE=false", "GEMINI_CLI_TRUST_WORKSPACE=false"},
		{"opencode", "OPENCODE_CONFIG_CONTENT={model: x}", "OPENCODE_CONFIG_CONTENT is not a JSON object"},
		{"opencode", `OPENCODE_CONFIG_CONTENT={"mcp":"x"}`, "mcp is not an object"},
	}
	for _, c := range refused {
		if c.kind == "gemini-env" {
			os.WriteFile(own, []byte("{}"), 0o644)
			c.kind = "gemini"
			s.RunEnv = []string{c.env}
			if _, err := gemini.MCP(s); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mcp: off") {
				t.Errorf("gemini with %s: error %v", c.env, err)
			}
			continue
		}
		reg, _ := Lookup(c.kind)
		s.RunEnv = []string{c.env}
		if c.kind == "gemini" {
			s.RunEnv = nil
			if err := os.WriteFile(own, []byte(c.env), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := reg.MCP(s); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mcp: off") {
			t.Errorf("%s with %s: error %v, want %q and the way out", c.kind, c.env, err, c.want)
		}
	}

}
