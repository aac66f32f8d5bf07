package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var hostile = []string{
	"../../etc", "..", ".", ".git", ".hidden", "a/b", "a\\b", "/etc/passwd", "a\x00b", "\x00",
	"DRV-42/../../..", strings.Repeat("x", 500), strings.Repeat("../", 100), "ünïcödé-卡片", "\xff\xfe",
	" ", "-rf", "~", "$HOME", "a/../../b", "./", "...", "C:\\Windows", "\n", "a" + strings.Repeat("é", 100),
}

// checkInside asserts that p is a direct child of root with a safe name.
func checkInside(t testing.TB, root, id, p string) {
	t.Helper()
	if filepath.Dir(p) != root {
		t.Fatalf("Path(%q, %q) = %q: not a direct child of the root", root, id, p)
	}
	base := filepath.Base(p)
	if base == "." || base == ".." || strings.HasPrefix(base, ".") || base == "" {
		t.Fatalf("Path(%q, %q) = %q: bad name", root, id, p)
	}
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r)) {
			t.Fatalf("Path(%q, %q) = %q: character %q", root, id, p, r)
		}
	}
	if len(base) > MaxNameLen+9 {
		t.Fatalf("Path(%q, %q): name is %d bytes", root, id, len(base))
	}
	if !within(root, p) {
		t.Fatalf("Path(%q, %q) = %q: outside", root, id, p)
	}
}

func TestPathHostileIdentifiers(t *testing.T) {
	root := "/srv/drover/ws"
	seen := map[string]string{}
	for _, id := range hostile {
		p, err := Path(root, id)
		if err != nil {
			t.Fatalf("Path(%q): %v", id, err)
		}
		checkInside(t, root, id, p)
		if prev, dup := seen[p]; dup {
			t.Errorf("%q and %q share %s", prev, id, p)
		}
		seen[p] = id
	}
}

func TestPathNames(t *testing.T) {
	for id, want := range map[string]string{
		"DRV-42":   "DRV-42", // unchanged: no hash
		"feat_1.2": "feat_1.2",
	} {
		if got, _ := Name(id); got != want {
			t.Errorf("Name(%q) = %q, want %q", id, got, want)
		}
	}
	a, _ := Name("a/b")
	b, _ := Name("a:b")
	if !strings.HasPrefix(a, "a_b-") || !strings.HasPrefix(b, "a_b-") || a == b {
		t.Errorf("a/b → %q, a:b → %q: want a_b-<hash>, distinct", a, b)
	}
	if again, _ := Name("a/b"); again != a {
		t.Errorf("hash not stable: %q vs %q", a, again)
	}
	if n, _ := Name(".git"); n == ".git" || !strings.HasPrefix(n, "_git-") {
		t.Errorf(".git → %q", n)
	}
}

func TestPathRefuses(t *testing.T) {
	for _, c := range []struct{ root, id string }{
		{"/srv/ws", ""},
		{"relative/root", "DRV-1"},
		{"", "DRV-1"},
		{"/", "DRV-1"},
		{"/srv/..", "DRV-1"}, // cleans to "/"
	} {
		if p, err := Path(c.root, c.id); err == nil {
			t.Errorf("Path(%q, %q) = %q, want an error", c.root, c.id, p)
		}
	}
}

func TestEnsureCreatesOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws") // root is created too
	dir, created, err := Ensure(root, "DRV-7")
	if err != nil || !created || dir != filepath.Join(root, "DRV-7") {
		t.Fatalf("Ensure = %q, %v, %v", dir, created, err)
	}
	dir2, created, err := Ensure(root, "DRV-7")
	if err != nil || created || dir2 != dir {
		t.Fatalf("second Ensure = %q, %v, %v", dir2, created, err)
	}
}

func TestEnsureRefusesSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "DRV-1")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(root, "DRV-1"); err == nil || !strings.Contains(err.Error(), "outside the root") {
		t.Fatalf("Ensure through a symlink out of the root: err = %v", err)
	}
	// A dangling symlink is refused too, and nothing is created at its target.
	target := filepath.Join(outside, "made-by-drover")
	os.Symlink(target, filepath.Join(root, "DRV-2"))
	if _, _, err := Ensure(root, "DRV-2"); err == nil {
		t.Fatal("Ensure through a dangling symlink succeeded")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("Ensure created a directory outside the root")
	}
	// A regular file where the workspace should be.
	os.WriteFile(filepath.Join(root, "DRV-3"), nil, 0o644)
	if _, _, err := Ensure(root, "DRV-3"); err == nil {
		t.Fatal("Ensure accepted a file")
	}
}

func TestEnsureUnderSymlinkedRoot(t *testing.T) {
	// An operator may symlink the root itself (e.g. to a bigger disk).
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	os.Symlink(real, link)
	dir, _, err := Ensure(link, "DRV-1")
	if err != nil || dir != filepath.Join(link, "DRV-1") {
		t.Fatalf("Ensure = %q, %v", dir, err)
	}
}

func TestRemove(t *testing.T) {
	root := t.TempDir()
	dir, _, _ := Ensure(root, "DRV-1")
	// A read-only tree, like a Go module cache.
	ro := filepath.Join(dir, "pkg", "mod")
	os.MkdirAll(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "f"), []byte("x"), 0o444)
	os.Chmod(ro, 0o555)
	if err := Remove(root, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Fatal("still there")
	}
	if err := Remove(root, dir); err != nil {
		t.Fatalf("removing again: %v", err)
	}
}

func TestRemoveRefuses(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	os.WriteFile(keep, []byte("x"), 0o644)
	for _, dir := range []string{root, filepath.Dir(root), outside, root + "/..", root + "/../x", "relative", "", "/"} {
		if err := Remove(root, dir); err == nil {
			t.Errorf("Remove(%q) succeeded", dir)
		}
	}
	// A symlinked component inside the root must not redirect the deletion.
	os.Symlink(outside, filepath.Join(root, "link"))
	if err := Remove(root, filepath.Join(root, "link", "keep")); err == nil {
		t.Error("Remove through a symlinked parent succeeded")
	}
	// Removing a workspace that is a symlink removes only the link.
	if err := Remove(root, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("target of the symlink was touched: %v", err)
	}
}

// FuzzWorkspacePath: whatever the identifier, the path is a direct child of
// the root with a safe name, and Name is deterministic.
func FuzzWorkspacePath(f *testing.F) {
	for _, id := range hostile {
		f.Add(id)
	}
	f.Add("DRV-1")
	f.Fuzz(func(t *testing.T, id string) {
		root := "/var/lib/drover/workspaces"
		p, err := Path(root, id)
		if id == "" {
			if err == nil {
				t.Fatal("empty identifier accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("Path(%q): %v", id, err)
		}
		checkInside(t, root, id, p)
		if !utf8.ValidString(p) {
			t.Fatalf("invalid UTF-8 in %q", p)
		}
		if q, _ := Path(root+"/", id); q != p {
			t.Fatalf("not stable: %q vs %q", p, q)
		}
	})
}
