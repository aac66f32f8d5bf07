package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goMention is a Go release the docs name: "Go 1.26.8 or newer",
// "**With Go** (1.26.8 or newer", "Go 1.26+".
var (
	goMention = regexp.MustCompile(`\bGo\b[*\s(]*(1\.\d+(?:\.\d+)?)`)
	goLine    = regexp.MustCompile(`(?m)^go (\S+)\s*$`)
)

// TestGoVersionMatchesGoMod: every Go release the docs name is go.mod's go
// line (the issue: go.mod pinned a patch release newer than the README's
// "1.26+", and an older 1.26 toolchain went to download another).
func TestGoVersionMatchesGoMod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gm := goLine.FindSubmatch(b)
	if gm == nil {
		t.Fatal("go.mod has no go line")
	}
	want := string(gm[1])
	files, err := docFiles(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range goMention.FindAllStringSubmatch(line, -1) {
				if m[1] != want {
					t.Errorf("%s:%d: %q names Go %s, go.mod requires %s; write Go %[5]s", f, i+1, m[0], m[1], want)
				}
			}
		}
	}
}
