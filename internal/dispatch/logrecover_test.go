package dispatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
)

// A run whose agent exited before its owner could route it is classified
// from the log the process runner wrote; one that was still running is not.
func TestClassifyFromLog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	finished := write("a.log", "working\n[stderr] error: unexpected argument '--bogus' found\n[drover: exit code 2 after 1.2s]\n")
	cls, ok := classifyFromLog(finished, "codex", nil, time.Now())
	if !ok || cls.Kind != policy.KindConfigError {
		t.Fatalf("finished run: ok=%v kind=%s (%s)", ok, cls.Kind, cls.Message)
	}
	clean := write("b.log", "all done\n[drover: exit code 0 after 3s]\n")
	if cls, ok := classifyFromLog(clean, "command", nil, time.Now()); !ok || cls.Kind != policy.KindSucceeded {
		t.Fatalf("clean run: ok=%v kind=%s", ok, cls.Kind)
	}
	live := write("c.log", "still working\n")
	if _, ok := classifyFromLog(live, "command", nil, time.Now()); ok {
		t.Fatal("a log without an exit note must not be taken as finished")
	}
	if _, ok := classifyFromLog(filepath.Join(dir, "missing.log"), "command", nil, time.Now()); ok {
		t.Fatal("a missing log must not be taken as finished")
	}
}
