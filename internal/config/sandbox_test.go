package config

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent/sandbox"
)

func TestSandboxKey(t *testing.T) {
	home, _ := os.UserHomeDir()
	cfg := mustParse(t, `---
agents:
  default: a
  profiles:
    a: {kind: command, command: ./a.sh, sandbox: {kind: bwrap, read: ["~/.claude.json", /srv/cache/], write: [/srv/out]}}
    b: {kind: command, command: ./b.sh, sandbox: {kind: bwrap, network: loopback}}
    c: {kind: command, command: ./c.sh}
---
hi
`)
	a, _ := cfg.Agents.Profile("a")
	want := sandbox.Config{Kind: "bwrap", Network: "on", Read: []string{home + "/.claude.json", "/srv/cache"}, Write: []string{"/srv/out"}}
	if a.Sandbox == nil || a.Sandbox.Kind != want.Kind || a.Sandbox.Network != want.Network || !slices.Equal(a.Sandbox.Read, want.Read) || !slices.Equal(a.Sandbox.Write, want.Write) {
		t.Errorf("a's sandbox = %+v, want %+v", a.Sandbox, want)
	}
	if b, _ := cfg.Agents.Profile("b"); b.Sandbox == nil || b.Sandbox.Network != "loopback" {
		t.Errorf("b's sandbox = %+v", b.Sandbox)
	}
	if c, _ := cfg.Agents.Profile("c"); c.Sandbox != nil {
		t.Errorf("a profile without the key has no sandbox: %+v", c.Sandbox)
	}
}

func TestSandboxKeyErrors(t *testing.T) {
	for _, c := range []struct{ sb, want string }{
		{"{kind: docker}", "agents.profiles.a.sandbox.kind"},
		{"{}", "agents.profiles.a.sandbox.kind"},
		{"{kind: bwrap, network: none}", "agents.profiles.a.sandbox.network"},
		{"{kind: bwrap, read: [relative/x]}", "agents.profiles.a.sandbox.read[0]"},
		{"{kind: bwrap, read: [/]}", "whole file system"},
		{`{kind: bwrap, read: ["~"]}`, "operator's whole home"},
		{"{kind: bwrap, read: [~]}", "is empty"}, // YAML reads a bare ~ as null
		{"{kind: bwrap, write: [/srv/../etc]}", "agents.profiles.a.sandbox.write[0]"},
		{"{kind: bwrap, read: [/srv/ok, /proc/self]}", "agents.profiles.a.sandbox.read[1]"},
		// the default SQLite store lives in <dir of WORKFLOW.md>/.drover
		{"{kind: bwrap, read: [/srv/proj]}", "/srv/proj/.drover"},
		{"{kind: bwrap, write: [/srv/proj/.drover/workspaces]}", "agents.profiles.a.sandbox.write[0]"},
		{"{kind: bwrap, reed: [/x]}", "agents.profiles.a.sandbox.reed"},
	} {
		src := "---\nagents: {profiles: {a: {kind: command, command: ./a.sh, sandbox: " + c.sb + "}}}\n---\nhi\n"
		_, err := parse(t, src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.sb, err, c.want)
		}
	}
	if _, err := parse(t, "---\nagents: {profiles: {s: {kind: sim, sandbox: {kind: bwrap}}}}\n---\nhi\n"); err == nil || !strings.Contains(err.Error(), "agents.profiles.s.sandbox") {
		t.Errorf("a sandboxed sim profile: err = %v", err)
	}
	_, err := parse(t, "---\nstore: sqlite:/var/lib/drover/board.db\nagents: {profiles: {a: {kind: command, command: ./a.sh, sandbox: {kind: bwrap, read: [/var/lib]}}}}\n---\nhi\n")
	if err == nil || !strings.Contains(err.Error(), "/var/lib/drover") {
		t.Errorf("a read of the store's directory: err = %v", err)
	}
}
