package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// releaseFlags are the -X overrides CONTRIBUTING.md tells release builders to pass.
var releaseFlags = []string{
	"-X github.com/drover-dev/drover/internal/version.version=",
	"-X github.com/drover-dev/drover/internal/version.commit=",
	"-X github.com/drover-dev/drover/internal/version.date=",
}

// TestReleaseLdflags builds the binary the way CONTRIBUTING.md says a release is
// built and checks drover --version reports what was passed: a -X naming a
// variable that does not exist is silently ignored by the linker.
func TestReleaseLdflags(t *testing.T) {
	readme, err := os.ReadFile("../../CONTRIBUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range releaseFlags {
		if !strings.Contains(string(readme), f) {
			t.Errorf("CONTRIBUTING.md (Release builds) does not document %q", f)
		}
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	vals := []string{"v9.8.7", "0123456789abcdef0123456789abcdef01234567", "2026-12-24T00:00:00Z"}
	var ld []string
	for i, f := range releaseFlags {
		ld = append(ld, f+vals[i])
	}
	bin := filepath.Join(t.TempDir(), "drover")
	if out, err := exec.Command("go", "build", "-ldflags", strings.Join(ld, " "), "-o", bin, "github.com/drover-dev/drover/cmd/drover").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("drover --version: %v\n%s", err, out)
	}
	want := "drover v9.8.7 (commit 0123456789ab, 2026-12-24T00:00:00Z, "
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("drover --version = %q, want it to start %q", out, want)
	}
}
