package reload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/config"
)

func TestWatcherKeepsLastGood(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "WORKFLOW.md")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("---\npolicy: {max_attempts: 4}\n---\nHi {{ card.title }}\n")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(path, cfg)
	if c, changed, err := w.Check(); changed || err != nil || c != cfg {
		t.Fatalf("unchanged file: %v %v", changed, err)
	}

	// A valid edit is picked up.
	write("---\npolicy: {max_attempts: 6}\n---\nHi {{ card.title }}\n")
	c, changed, err := w.Check()
	if !changed || err != nil || c.Policy.MaxAttempts != 6 || w.Current() != c {
		t.Fatalf("valid edit: %v %v %+v", changed, err, c.Policy)
	}

	// An invalid edit keeps the last good config and reports the error once.
	write("---\npolicy: {max_attempts: 0}\n---\nHi {{ card.title }}\n")
	c, changed, err = w.Check()
	if changed || err == nil || c.Policy.MaxAttempts != 6 || !strings.Contains(err.Error(), "policy.max_attempts") {
		t.Fatalf("invalid edit: %v %v", changed, err)
	}
	if _, _, err := w.Check(); err != nil {
		t.Errorf("same invalid file should not re-report: %v", err)
	}
	if w.LastError() == nil || w.Current().Policy.MaxAttempts != 6 {
		t.Error("LastError should persist, Current should be the last good config")
	}

	// A broken template is also kept out.
	write("---\n---\nHi {{ card.nope }}\n")
	if _, _, err := w.Check(); err == nil || !strings.Contains(err.Error(), "card.nope") {
		t.Errorf("template error: %v", err)
	}

	// The file disappearing keeps the config too.
	os.Remove(path)
	if c, _, err := w.Check(); err == nil || c.Policy.MaxAttempts != 6 {
		t.Errorf("missing file: %v", err)
	}

	// Fixing it clears the error.
	write("---\npolicy: {max_attempts: 7}\n---\nHi {{ card.title }}\n")
	c, changed, err = w.Check()
	if !changed || err != nil || c.Policy.MaxAttempts != 7 || w.LastError() != nil {
		t.Fatalf("fixed: %v %v %v", changed, err, w.LastError())
	}
}

func TestRestartNeeded(t *testing.T) {
	a, err := config.Parse([]byte("---\nserver: {port: 4840}\n---\n"), "/srv")
	b, err2 := config.Parse([]byte("---\nserver: {port: 4841}\nstore: sqlite:/x.db\n---\n"), "/srv")
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if got := strings.Join(RestartNeeded(a, b), ","); got != "store,server" {
		t.Errorf("RestartNeeded = %q", got)
	}
}
