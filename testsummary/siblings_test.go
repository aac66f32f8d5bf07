package testsummary

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSiblingsAreTestProcesses: the summary waits for the go command's
// test binaries (and its tools), not for every child it has. Under
// GOCACHEPROG the cache program is a child of the go command for as long
// as it runs, and the summary waited for it until its deadline: go test
// ./testsummary/ took 9 minutes. Here this test's own children stand in
// for the go command's: a sleep is not waited for, a pkg.test is.
func TestSiblingsAreTestProcesses(t *testing.T) {
	if !haveProc() {
		t.Skip("siblings reads Linux's /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	start := func(path string) {
		cmd := exec.Command(path, "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	start(sleep) // a cache program, say
	if n := siblings(os.Getpid()); n != 0 {
		t.Errorf("with a child that is no test binary, siblings = %d, want 0", n)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.test")
	if err := os.WriteFile(other, b, 0o755); err != nil {
		t.Fatal(err)
	}
	start(other) // another package's test binary
	if n := siblings(os.Getpid()); n != 1 {
		t.Errorf("with another package's test binary running, siblings = %d, want 1", n)
	}
}
