package config

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Workspace cleanup modes.
const (
	CleanupNever  = "never"
	CleanupOnDone = "on_done"
	CleanupOnSink = "on_sink" // done, blocked or cancelled
)

// Workspace is where each card's working directory lives.
type Workspace struct {
	Root    string `json:"root"`    // absolute
	Cleanup string `json:"cleanup"` // never | on_done | on_sink
}

// DefaultWorkspaceRoot is workspace.root unless the file says (relative to it).
const DefaultWorkspaceRoot = ".drover/workspaces"

var cleanupModes = []string{CleanupNever, CleanupOnDone, CleanupOnSink}

func decodeWorkspace(d *decoder, n *yaml.Node, baseDir string) Workspace {
	w := Workspace{Root: DefaultWorkspaceRoot, Cleanup: CleanupOnDone}
	f := d.fields(n, "workspace", []string{"root", "cleanup"}, lenient)
	if v, ok := f["root"]; ok {
		if s := d.str(v, "workspace.root", expandPlain); s != "" {
			w.Root = s
		}
	}
	w.Root = resolvePath(w.Root, baseDir)
	if v, ok := f["root"]; ok {
		if msg := rootProblem(w.Root, baseDir); msg != "" {
			d.errf(deref(v), "workspace.root", "%s", msg)
		}
	}
	if v, ok := f["cleanup"]; ok {
		w.Cleanup = d.str(v, "workspace.cleanup", expandPlain)
		if !contains(cleanupModes, w.Cleanup) {
			d.errf(deref(v), "workspace.cleanup", "%q is not a cleanup mode; use never, on_done or on_sink (done, blocked or cancelled)", w.Cleanup)
		}
	}
	return w
}

// rootProblem says why root cannot hold the workspaces ("" when it can).
// Each card's workspace is a directory under root named after its
// identifier, created, reused and removed by drover; the filesystem root
// cannot take them (every run failed), and the directory of WORKFLOW.md or
// one above it would mix them with the project's own directories, which a
// cleanup could then remove.
func rootProblem(root, baseDir string) string {
	fix := "use a directory of its own, e.g. " + DefaultWorkspaceRoot + " (the default)"
	if root == filepath.Dir(root) {
		return "\"" + root + "\" is the filesystem root; " + fix
	}
	base := filepath.Clean(baseDir)
	if rel, err := filepath.Rel(root, base); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "\"" + root + "\" holds WORKFLOW.md's directory " + base + "; workspaces need a directory of their own, not a project directory: " + fix
	}
	return ""
}
