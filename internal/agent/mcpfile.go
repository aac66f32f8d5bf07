package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteMCPFile writes a kind's MCP config (v as indented JSON) to name in
// the run's private directory and returns its path. The file holds the
// server's command and the names of the variables it needs, never their
// values.
func WriteMCPFile(s MCPServer, name string, v any) (string, error) {
	if s.Dir == "" {
		return "", fmt.Errorf("no private directory for the run's MCP config")
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(s.Dir, name)
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// MCPEnvRefs maps each of s's variables to a reference in the syntax a
// config file expands (format has one %s for the name: "${%s}", "{env:%s}").
func MCPEnvRefs(s MCPServer, format string) map[string]string {
	m := make(map[string]string, len(s.EnvVars))
	for _, k := range s.EnvVars {
		m[k] = fmt.Sprintf(format, k)
	}
	return m
}
