package dispatch

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/sandbox"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
)

// A sandboxed profile's run gets its card's home (0700, kept between the
// card's runs with what the CLI wrote there); a profile without a sandbox
// gets none; the card's cleanup removes it, also on a node that never had
// the workspace.
func TestSandboxedRunsKeepTheirCardsHome(t *testing.T) {
	homes := filepath.Join(t.TempDir(), "homes")
	cfg := &config.Config{}
	cfg.Agents.Profiles = map[string]agent.Profile{
		"boxed": {Name: "boxed", Kind: "claude", Sandbox: &sandbox.Config{Kind: sandbox.KindBwrap}},
		"plain": {Name: "plain", Kind: "claude"},
	}
	r := &runner{homes: homes}
	c := board.Card{ID: "c1", Identifier: "DRV/7"}
	if dir, err := r.sandboxHome(attempt{card: c, profile: "plain"}, cfg); err != nil || dir != "" {
		t.Fatalf("a profile without a sandbox got home %q (%v), want none", dir, err)
	}
	dir, err := r.sandboxHome(attempt{card: c, profile: "boxed"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != homes || filepath.Base(dir) == "DRV/7" {
		t.Fatalf("home %q, want a safe name under %s", dir, homes)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home %s: %v %v, want a 0700 directory", dir, fi.Mode(), err)
	}
	session := filepath.Join(dir, ".claude", "projects", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(session), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(session, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	again, err := r.sandboxHome(attempt{card: c, profile: "boxed"}, cfg)
	if err != nil || again != dir {
		t.Fatalf("the next run's home %q (%v), want the card's %q", again, err, dir)
	}
	if _, err := os.Stat(session); err != nil {
		t.Fatalf("the session did not survive to the next run: %v", err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("home mode %v on the next run, want 0700 again", fi.Mode())
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	removeWorkspace(log, cfg, c, filepath.Join(t.TempDir(), "no-workspace-here"), homes)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the card's cleanup left its home: %v", err)
	}
}
