package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/tracker"
)

func TestInvocation(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "drover")
	other := filepath.Join(dir, "other-drover")
	for _, p := range []string{bin, other} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	onPath := func(p string) func(string) (string, error) {
		return func(string) (string, error) {
			if p == "" {
				return "", errors.New("not found")
			}
			return p, nil
		}
	}
	goRun := filepath.Join(os.TempDir(), "go-build123456", "b001", "exe", "drover")
	for _, c := range []struct {
		name, arg0, self, path, want string
	}{
		{"found on PATH", "drover", bin, bin, "drover"},
		{"./drover, none on PATH", "./drover", bin, "", "./drover"},
		{"./drover, another drover on PATH", "./drover", bin, other, "./drover"},
		{"a path that PATH resolves to", bin, bin, bin, "drover"},
		{"an absolute path not on PATH", bin, bin, "", bin},
		{"go run", goRun, goRun, "", "go run ./cmd/drover"},
		{"a path with a space", "./my tools/drover", bin, "", "'./my tools/drover'"},
	} {
		if got := invocation(c.arg0, c.self, onPath(c.path)); got != c.want {
			t.Errorf("%s: invocation(%q) = %q, want %q", c.name, c.arg0, got, c.want)
		}
	}
}

func TestNextStepsNameTheConfigOutsideTheCurrentDirectory(t *testing.T) {
	got := nextSteps("", filepath.Join("board", "WORKFLOW.md"), "./drover")
	if !strings.Contains(got, "./drover --config board/WORKFLOW.md card add") || !strings.Contains(got, "./drover --config board/WORKFLOW.md serve") {
		t.Errorf("next steps for init board:\n%s", got)
	}
	if got := nextSteps("", "WORKFLOW.md", "drover"); !strings.Contains(got, "\n  drover card add --title") {
		t.Errorf("next steps for init in the current directory:\n%s", got)
	}
}

// TestInitHintOfTheBuiltBinary runs the binary as a user does after
// `go build ./cmd/drover`: as ./drover with no drover on PATH, and then
// from PATH.
func TestInitHintOfTheBuiltBinary(t *testing.T) {
	src := testkit.Binary(t)
	dir := t.TempDir()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "drover"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(path, arg0 string, args ...string) string {
		t.Helper()
		// The shell's lookup: arg0 as typed, the file it names in dir or on path.
		cmd := exec.Command(filepath.Join(dir, "drover"), args...)
		cmd.Args[0] = arg0
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", arg0, args, err, out)
		}
		return string(out)
	}
	out := run("/usr/bin:/bin", "./drover", "init")
	if !strings.Contains(out, "\n  ./drover card add --title") || !strings.Contains(out, "\n  ./drover serve") {
		t.Errorf("./drover init printed:\n%s", out)
	}
	out = run(dir+":/usr/bin:/bin", "drover", "init", "--force", "--tracker", "github")
	if !strings.Contains(out, "\n  drover serve") || !strings.Contains(out, `put the label "drover" on the issues`) {
		t.Errorf("drover init (on PATH) printed:\n%s", out)
	}
}

// An external tracker that requires no label dispatches every issue: serve
// says so at start (init writes required_labels: [drover]).
func TestUnlabelledTrackerWarning(t *testing.T) {
	if w := unlabelledWarning(tracker.Config{Kind: tracker.KindGitHub, Repo: "acme/app", ActiveStates: []string{"open"}}); !strings.Contains(w, "every issue of the repository acme/app") || !strings.Contains(w, "[drover]") {
		t.Errorf("github without labels: %q", w)
	}
	if w := unlabelledWarning(tracker.Config{Kind: tracker.KindGitHub, Repo: "acme/app", RequiredLabels: []string{"drover"}}); w != "" {
		t.Errorf("github with a label: %q", w)
	}
	if w := unlabelledWarning(tracker.Config{Kind: tracker.KindNative}); w != "" {
		t.Errorf("native board: %q", w)
	}
}
