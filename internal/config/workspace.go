package config

import "gopkg.in/yaml.v3"

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
	if v, ok := f["cleanup"]; ok {
		w.Cleanup = d.str(v, "workspace.cleanup", expandPlain)
		if !contains(cleanupModes, w.Cleanup) {
			d.errf(deref(v), "workspace.cleanup", "%q is not a cleanup mode; use never, on_done or on_sink (done, blocked or cancelled)", w.Cleanup)
		}
	}
	return w
}
