package gate

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	on := Gate{Suite: "on suite", Where: "pkg/a", Off: func() string { return "" }}
	off := Gate{Suite: "off suite", Where: "pkg/b", Off: func() string { return "set DROVER_X=1" }}
	if got := Summary([]Gate{on, on}); got != "" {
		t.Errorf("every suite on: summary %q, want nothing", got)
	}
	got := Summary([]Gate{on, off})
	if !strings.Contains(got, "go test skipped") || !strings.Contains(got, "  off suite (pkg/b): set DROVER_X=1\n") || strings.Contains(got, "on suite") {
		t.Errorf("one suite off: summary\n%s", got)
	}
}

// TestFilesGateSkipIsNotCached: a skip on a gate that looks at files
// outside the module (chromium installed or not) is not replayed from go
// test's cache: the browser tests were reported skipped from the cache
// after chromium was installed. The same skip is run twice by a plain go
// test; the second must run again. The gates that look at programs are
// such gates.
func TestFilesGateSkipIsNotCached(t *testing.T) {
	for _, g := range []Gate{Chromium, PGRestart, SystemdAnalyze} {
		if !g.Files {
			t.Errorf("gate %q looks at programs outside the module but is not Files", g.Suite)
		}
	}
	if testing.Short() {
		t.Skip("runs go test")
	}
	for run := 1; run <= 2; run++ {
		cmd := exec.Command("go", "test", "-run", "^TestHelperFilesGateSkip$", ".")
		cmd.Env = append(os.Environ(), "GATE_TEST_HELPER=1", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "(cached)") {
			t.Fatalf("run %d: the skip came from the test cache:\n%s", run, out)
		}
	}
}

// TestHelperFilesGateSkip is TestFilesGateSkipIsNotCached's skipped test.
func TestHelperFilesGateSkip(t *testing.T) {
	if os.Getenv("GATE_TEST_HELPER") != "1" {
		t.Skip("run by TestFilesGateSkipIsNotCached")
	}
	Gate{Suite: "helper suite", Files: true, Off: func() string { return "a program is missing" }}.Require(t)
}
