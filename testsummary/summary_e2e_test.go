package testsummary

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/testkit/gate"
)

// TestSummaryShowsInPlainGoTest runs a plain (package-list mode, not -v)
// go test of this package with the PostgreSQL variable unset, as a fresh
// clone does: the go command's output says the PostgreSQL cases were
// skipped and which variable turns them on (go test hid a passing
// package's output, so nothing said so).
func TestSummaryShowsInPlainGoTest(t *testing.T) {
	if !haveProc() {
		t.Skip("without /proc the summary goes to the terminal (/dev/tty), which this test cannot read")
	}
	// Twice, without -count=1: a result from the test cache would replay no
	// summary, so the second run must run the test again.
	for run := 1; run <= 2; run++ {
		cmd := exec.Command("go", "test", "-run", "^TestSkipSummary$", ".")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, gate.PostgresEnv+"=") && !strings.HasPrefix(kv, "GOFLAGS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test: %v\n%s", err, out)
		}
		s := string(out)
		if !strings.Contains(s, "go test skipped these suites") || !strings.Contains(s, "PostgreSQL cases") || !strings.Contains(s, "set "+gate.PostgresEnv) {
			t.Fatalf("run %d: plain go test output has no skip summary:\n%s", run, s)
		}
		if strings.Contains(s, "(cached)") {
			t.Fatalf("run %d: the summary's result came from the test cache:\n%s", run, s)
		}
		if i, j := strings.Index(s, "PostgreSQL cases"), strings.Index(s, "ok  \t"); j < i {
			t.Errorf("run %d: the summary comes after the package's ok line:\n%s", run, s)
		}
	}
}

// TestLastPackage: go test starts the test binaries in the order go list
// prints the packages; the summary waits for the others only once it has
// started, so it must be the last.
func TestLastPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 || !strings.HasSuffix(pkgs[len(pkgs)-1], "/testsummary") {
		t.Fatalf("the last package of go test ./... is %q, not testsummary", pkgs[len(pkgs)-1])
	}
}

// TestEveryGateIsUsed: each gate the summary lists is what some test
// skips on (else the summary would name a suite that does not exist).
func TestEveryGateIsUsed(t *testing.T) {
	gates := map[string]gate.Gate{"Postgres": gate.Postgres, "Chromium": gate.Chromium, "RealCLIs": gate.RealCLIs,
		"PGRestart": gate.PGRestart, "SystemdAnalyze": gate.SystemdAnalyze, "Release": gate.Release, "Bwrap": gate.Bwrap}
	if len(gates) != len(gate.All()) {
		t.Fatalf("this test knows %d gates, gate.All has %d", len(gates), len(gate.All()))
	}
	for _, g := range gate.All() {
		found := false
		for _, h := range gates {
			found = found || reflect.ValueOf(g.Off).Pointer() == reflect.ValueOf(h.Off).Pointer()
		}
		if !found {
			t.Errorf("gate %q is not one this test knows", g.Suite)
		}
	}
	var src bytes.Buffer
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.Contains(p, "internal/testkit/gate") {
			return err
		}
		b, err := os.ReadFile(p)
		src.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range gates {
		if !bytes.Contains(src.Bytes(), []byte("gate."+name+".Require(")) {
			t.Errorf("no test requires gate.%s", name)
		}
	}
}
