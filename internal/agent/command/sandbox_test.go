package command

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/sandbox"
)

// A sandboxed profile's process carries its sandbox and the paths the run
// needs inside: the launcher's binds, the prompt file, drover's binary, and
// the card's home.
func TestBuildSpecSandboxBinds(t *testing.T) {
	dir := t.TempDir()
	sb := &sandbox.Config{Kind: sandbox.KindBwrap}
	p := agent.Profile{Name: "boxed", Kind: Kind, Command: "/bin/true", Prompt: PromptFile, Sandbox: sb}
	inv := agent.Invocation{Workspace: dir, LogPath: filepath.Join(dir, "logs", "run.log"), Prompt: "hi",
		Env:          map[string]string{"DROVER_BIN": "/opt/drover/bin/drover"},
		SandboxBinds: []sandbox.Bind{{Path: "/run/drover/cap.sock", RW: true}}, SandboxHome: "/srv/proj/.drover/homes/DRV-1"}
	s, err := BuildSpec(p, inv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sandbox != sb {
		t.Errorf("the spec's sandbox = %+v, want the profile's", s.Sandbox)
	}
	if s.SandboxHome != inv.SandboxHome {
		t.Errorf("the spec's sandbox home = %q, want the card's %q", s.SandboxHome, inv.SandboxHome)
	}
	for _, want := range []sandbox.Bind{{Path: "/run/drover/cap.sock", RW: true}, {Path: filepath.Join(dir, "logs", "run.prompt.md")}, {Path: "/opt/drover/bin/drover", Try: true}} {
		if !slices.Contains(s.Binds, want) {
			t.Errorf("binds %+v lack %+v", s.Binds, want)
		}
	}
	p.Sandbox = nil
	if s, _ := BuildSpec(p, inv); s.Sandbox != nil {
		t.Errorf("a profile without a sandbox runs without one: %+v", s.Sandbox)
	}
}
