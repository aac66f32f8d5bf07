// Package workspace gives every card its own directory under a root: a safe
// name derived from the card identifier, creation that refuses symlink
// escapes, removal that refuses anything outside the root, the lifecycle
// hooks, and the cleanup policy.
package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxNameLen caps the sanitized part of a workspace name; a changed name adds
// "-" and an 8-character hash after it.
const MaxNameLen = 80

// Name maps a card identifier to a directory name: characters outside
// [A-Za-z0-9._-] become "_" (one per rune; one per byte of invalid UTF-8), a
// leading "." becomes "_" (so ".", "..", ".git" and hidden names cannot
// occur), and the result is cut to MaxNameLen. When anything changed, "-" and
// a short hash of the original identifier are appended, so distinct
// identifiers that sanitize alike ("a/b", "a:b") get distinct directories.
// An empty identifier is an error.
func Name(identifier string) (string, error) {
	if identifier == "" {
		return "", errors.New("workspace: empty card identifier")
	}
	var b strings.Builder
	changed := false
	for _, r := range identifier {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			changed = true
		}
	}
	name := b.String()
	if name[0] == '.' {
		name = "_" + name[1:]
		changed = true
	}
	if len(name) > MaxNameLen {
		name = name[:MaxNameLen]
		changed = true
	}
	if changed {
		sum := sha256.Sum256([]byte(identifier))
		name += "-" + hex.EncodeToString(sum[:4])
	}
	return name, nil
}

// Path is the workspace directory for identifier: root/Name(identifier).
// root must be absolute (after cleaning) and not "/". The result is always
// strictly inside root.
func Path(root, identifier string) (string, error) {
	r, err := cleanRoot(root)
	if err != nil {
		return "", err
	}
	name, err := Name(identifier)
	if err != nil {
		return "", err
	}
	p := filepath.Join(r, name)
	if !within(r, p) { // cannot happen; kept as the last line of defence
		return "", fmt.Errorf("workspace: %q maps outside the root %s", identifier, r)
	}
	return p, nil
}

// Ensure creates the workspace for identifier (and the root) if needed and
// returns its path and whether it was created now. It refuses a workspace
// that is, or resolves through a symlink to, anything outside the root or
// anything that is not a directory.
//
// The usual case costs one syscall (two for a workspace that exists) instead
// of a dozen: dir is root joined with one name that has no separator and
// cannot be "." or "..", so a plain directory at dir (one mkdir just made —
// mkdir never follows a symlink at its last component — or one Lstat says
// is a directory, not a symlink) resolves to the resolved root plus that
// name: strictly inside the root, which is all the full check below would
// find. Anything else (no root yet, a symlink, a file, an error) takes the
// full check.
func Ensure(root, identifier string) (dir string, created bool, err error) {
	dir, err = Path(root, identifier)
	if err != nil {
		return "", false, err
	}
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		return dir, true, nil
	case errors.Is(err, fs.ErrExist):
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			return dir, false, nil
		}
	}
	return ensureChecked(root, dir)
}

// ensureChecked is Ensure's full check: it makes the root if needed,
// resolves it and dir through any symlinks, and refuses a dir that resolves
// outside the root or is not a directory.
func ensureChecked(root, dir string) (_ string, created bool, err error) {
	r, _ := cleanRoot(root)
	if err := os.MkdirAll(r, 0o755); err != nil {
		return "", false, fmt.Errorf("workspace root: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(r)
	if err != nil {
		return "", false, fmt.Errorf("workspace root: %w", err)
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		switch err := os.Mkdir(dir, 0o755); {
		case err == nil:
			created = true
		case !errors.Is(err, fs.ErrExist): // lost a race: check what is there
			return "", false, fmt.Errorf("workspace: %w", err)
		}
	} else if err != nil {
		return "", false, fmt.Errorf("workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !within(realRoot, real) {
		return "", false, fmt.Errorf("workspace %s resolves to %s, outside the root %s; remove the symlink", dir, real, realRoot)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", false, fmt.Errorf("workspace %s exists and is not a directory; remove it", dir)
	}
	return dir, created, nil
}

// Remove deletes dir and everything in it. dir must be strictly inside root,
// and its parent must resolve inside root, so a symlinked component cannot
// redirect the deletion; a dir that is itself a symlink loses only the link.
// Read-only directories inside (e.g. a Go module cache) are made writable
// first. A dir that does not exist is not an error.
func Remove(root, dir string) error {
	r, err := cleanRoot(root)
	if err != nil {
		return err
	}
	d := filepath.Clean(dir)
	if !filepath.IsAbs(d) || !within(r, d) {
		return fmt.Errorf("workspace: refusing to remove %q: not strictly inside the root %s", dir, r)
	}
	realRoot, err := filepath.EvalSymlinks(r)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("workspace root: %w", err)
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if parent != realRoot && !within(realRoot, parent) {
		return fmt.Errorf("workspace: refusing to remove %q: its parent resolves to %s, outside the root %s", dir, parent, realRoot)
	}
	target := filepath.Join(parent, filepath.Base(d))
	if err := os.RemoveAll(target); err != nil {
		makeWritable(target)
		if err := os.RemoveAll(target); err != nil {
			return fmt.Errorf("workspace: remove %s: %w", dir, err)
		}
	}
	return nil
}

// makeWritable adds owner rwx to every directory under dir (not following
// symlinks), so RemoveAll can delete read-only trees.
func makeWritable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			if fi, err := d.Info(); err == nil {
				os.Chmod(p, fi.Mode().Perm()|0o700)
			}
		}
		return nil
	})
}

// CheckRoot says why root (absolute) cannot hold the workspaces of the
// project whose WORKFLOW.md is in baseDir: the filesystem root cannot take
// them, and baseDir or a directory above it would mix them with the
// project's own directories, which a cleanup could then remove.
func CheckRoot(root, baseDir string) error {
	fix := "use a directory of its own, e.g. .drover/workspaces (the default)"
	if root == filepath.Dir(root) {
		return fmt.Errorf("%q is the filesystem root; %s", root, fix)
	}
	if base := filepath.Clean(baseDir); root == base || within(root, base) {
		return fmt.Errorf("%q holds WORKFLOW.md's directory %s; workspaces need a directory of their own, not a project directory: %s", root, base, fix)
	}
	return nil
}

// cleanRoot cleans root and insists it is absolute and not "/".
func cleanRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("workspace: root is empty")
	}
	r := filepath.Clean(root)
	if !filepath.IsAbs(r) {
		return "", fmt.Errorf("workspace: root %q is not absolute", root)
	}
	if r == string(filepath.Separator) {
		return "", errors.New("workspace: root must not be /")
	}
	return r, nil
}

// within reports whether p is strictly inside root (both clean and absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
