package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace that was fine on one run and is swapped for a symlink out of
// the root before the next is refused on the next, and nothing is made at
// the symlink's target.
func TestEnsureRefusesWorkspaceSwappedForSymlink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	dir, created, err := Ensure(root, "DRV-1")
	if err != nil || !created {
		t.Fatalf("first Ensure = %v, %v", created, err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(root, "DRV-1"); err == nil || !strings.Contains(err.Error(), "outside the root") {
		t.Fatalf("Ensure of a workspace swapped for a symlink out of the root: err = %v", err)
	}
}

// The root itself swapped for a symlink between two runs: the next run's
// workspace is judged against where the root leads now, as on the first
// run: a plain directory there is accepted and made there, a symlink in it
// that leads out is refused.
func TestEnsureAfterRootSwappedForSymlink(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	if _, _, err := Ensure(root, "DRV-1"); err != nil {
		t.Fatal(err)
	}
	elsewhere, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(elsewhere, "DRV-2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(root, filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, root); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(root, "DRV-2"); err == nil || !strings.Contains(err.Error(), "outside the root") {
		t.Fatalf("Ensure through the swapped root's escaping symlink: err = %v", err)
	}
	dir, created, err := Ensure(root, "DRV-1")
	if err != nil || !created || dir != filepath.Join(root, "DRV-1") {
		t.Fatalf("Ensure under the swapped root = %q, %v, %v", dir, created, err)
	}
	if fi, err := os.Lstat(filepath.Join(elsewhere, "DRV-1")); err != nil || !fi.IsDir() {
		t.Fatalf("the workspace is not a directory where the root leads now: %v", err)
	}
}

// A symlink that stays inside the root is a workspace, as before, and is
// reported as existing, not created.
func TestEnsureAcceptsSymlinkInsideRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "shared"), filepath.Join(root, "DRV-1")); err != nil {
		t.Fatal(err)
	}
	dir, created, err := Ensure(root, "DRV-1")
	if err != nil || created || dir != filepath.Join(root, "DRV-1") {
		t.Fatalf("Ensure = %q, %v, %v", dir, created, err)
	}
}

// A root that was removed between runs is made again, and the workspace
// reported as created.
func TestEnsureRemakesRemovedRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "ws")
	if _, _, err := Ensure(root, "DRV-1"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(root)); err != nil {
		t.Fatal(err)
	}
	if _, created, err := Ensure(root, "DRV-1"); err != nil || !created {
		t.Fatalf("Ensure after the root was removed = %v, %v", created, err)
	}
}
