package release

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A snapshot built the way .ci/release builds it reports its stamps: a -X
// naming a variable internal/version does not have is silently ignored by
// the linker, so only the built binary can tell.
func TestSnapshotBuildIsStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const sha = "6d71f6c1a2b3c4d5e6f708192a3b4c5d6e7f8091"
	v, err := SnapshotVersion("0.1.0", sha, false)
	if err != nil {
		t.Fatal(err)
	}
	st := Stamp{Version: v, Commit: sha, Date: "2026-12-02T07:46:54Z"}
	bin := filepath.Join(t.TempDir(), "drover")
	cmd := BuildCommand(st, Target{runtime.GOOS, runtime.GOARCH}, bin)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("drover --version: %v\n%s", err, out)
	}
	want := "drover v0.1.1-SNAPSHOT-6d71f6c (commit 6d71f6c1a2b3, 2026-12-02T07:46:54Z, "
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("drover --version = %q, want it to start %q", out, want)
	}
}
