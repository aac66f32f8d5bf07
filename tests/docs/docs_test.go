// Package docs checks the Markdown the project ships: every relative link
// resolves to a file (and its #anchor to a heading), every page under docs/
// is reachable from the index (docs/README.md), and every `drover …` command
// quoted in inline code or a shell code block exists in drover's command
// tree, with the flags it names, and its --help runs.
package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const repoRoot = "../.."

func TestDocLinksResolve(t *testing.T) {
	pages := repoPages(t)
	for _, p := range checkLinks(repoRoot, pages) {
		t.Error(p)
	}
}

func TestDocCommandsExist(t *testing.T) {
	pages := repoPages(t)
	for _, p := range checkCommands(pages) {
		t.Error(p)
	}
}

func TestEveryDocPageReachableFromIndex(t *testing.T) {
	for _, p := range unreachable(repoPages(t), "docs/README.md") {
		t.Error(p)
	}
}

func repoPages(t *testing.T) map[string]*page {
	t.Helper()
	files, err := docFiles(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"README.md", "CONTRIBUTING.md", "docs/README.md"} {
		if !contains(files, must) {
			t.Fatalf("%s is missing: the checks read it", must)
		}
	}
	pages, err := loadPages(repoRoot, files)
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// TestCheckerCatches runs the checks on a tree of bad docs: each fault must
// be found, named by file and line, and the good lines must pass.
func TestCheckerCatches(t *testing.T) {
	root := t.TempDir()
	write(t, root, "README.md", strings.Join([]string{
		"# Top",
		"## Good heading",
		"[ok](docs/page.md) [ok](docs/page.md#the-pages-part) [ok](#good-heading) [web](https://example.com/x.md)",
		"[gone](docs/missing.md)",
		"[bad anchor](docs/page.md#nope)",
		"Run `drover card show ID` and `drover card add --title T [--label L]…` and `drover bench store|wakeup`.",
		"Run `drover card frob ID`.",
		"```sh",
		"go run ./cmd/drover demo --until-settled   # fine",
		"drover init && ./drover serve --no-such-flag",
		"```",
		"`drover agent ls|nosuch`",
	}, "\n"))
	write(t, root, "docs/page.md", "# Page\n## The page's part\n[up](../README.md#top) [up](../README.md#missing)\n")
	write(t, root, "docs/README.md", "# Index\n[page](page.md)\n")
	write(t, root, "docs/orphan.md", "# Nobody links here\n")
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := loadPages(root, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	probs := append(checkLinks(root, pages), checkCommands(pages)...)
	for _, p := range append(probs, unreachable(pages, "docs/README.md")...) {
		got = append(got, p.String())
	}
	want := []string{
		"README.md:4: link \"docs/missing.md\": docs/missing.md does not exist",
		"README.md:5: link \"docs/page.md#nope\": docs/page.md has no heading with the anchor #nope",
		"docs/page.md:3: link \"../README.md#missing\": README.md has no heading",
		"README.md:7: `drover card frob ID`: \"drover card\" has no subcommand \"frob\"",
		"README.md:10: `./drover serve --no-such-flag`: \"drover serve\" takes no flag --no-such-flag",
		"README.md:12: `drover agent ls|nosuch`: \"drover agent\" has no subcommand \"nosuch\"",
		"docs/orphan.md:1: no link from docs/README.md reaches this page",
	}
	if len(got) != len(want) {
		t.Errorf("found %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !hasPrefix(got, w) {
			t.Errorf("not found: %s\ngot:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasPrefix(list []string, p string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}
