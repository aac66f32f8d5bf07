// Package reload is drover serve's hot reload of WORKFLOW.md: a Watcher
// re-parses the file when its bytes change and keeps the last good config
// in force while an edit is refused.
package reload

import (
	"fmt"
	"strings"
	"sync"

	"github.com/drover-dev/drover/internal/config"
)

// Watcher reloads a WORKFLOW.md when it changes. An invalid edit keeps the
// last good config; the error is kept for status pages until a valid edit.
// It is safe for concurrent use.
type Watcher struct {
	path string
	// Validate, when set, runs the checks serve makes at start on every
	// parsed edit (those that need more than the file, such as a webhook to
	// this machine's own address); an edit it refuses is kept out like a
	// parse error. Set it before the first Check.
	Validate func(*config.Config) error

	mu      sync.Mutex
	cur     *config.Config
	lastErr error
	seen    string // hash of the last bytes examined, valid or not
}

// NewWatcher watches path; initial is the config already loaded from it.
func NewWatcher(path string, initial *config.Config) *Watcher {
	w := &Watcher{path: path, cur: initial}
	if initial != nil {
		w.seen = initial.Hash
		if initial.Path != "" {
			w.path = initial.Path
		}
	}
	return w
}

// Check is called on each tick. It reads the file and re-parses it when its
// content changed. A valid edit returns the new config and changed=true. An
// invalid edit returns the last good config, changed=false and the error; the
// error is returned once, on the tick it was found, and stays available from
// LastError until the file becomes valid again.
func (w *Watcher) Check() (cfg *config.Config, changed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, info, rerr := config.ReadFile(w.path)
	if rerr != nil {
		msg := fmt.Errorf("config reload: %v; keeping the last good config", rerr)
		if w.seen != "missing" {
			w.seen, w.lastErr = "missing", msg
			return w.cur, false, msg
		}
		return w.cur, false, nil
	}
	hash := config.Hash(data)
	if hash == w.seen {
		return w.cur, false, nil
	}
	w.seen = hash
	next, perr := config.ParseFile(w.path, w.path, data, info)
	if perr != nil {
		w.lastErr = fmt.Errorf("config reload failed, keeping the last good config: %w", perr)
		return w.cur, false, w.lastErr
	}
	if w.Validate != nil {
		if verr := w.Validate(next); verr != nil {
			w.lastErr = fmt.Errorf("config reload refused, keeping the last good config: %w", verr)
			return w.cur, false, w.lastErr
		}
	}
	if w.cur != nil && w.cur.Hash == next.Hash {
		// Back to the content already in use (e.g. a bad edit reverted).
		w.lastErr = nil
		return w.cur, false, nil
	}
	w.cur, w.lastErr = next, nil
	return next, true, nil
}

// Current is the config in effect: the last one that loaded cleanly.
func (w *Watcher) Current() *config.Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur
}

// LastError is the error of the last reload attempt, or nil once the file
// loads cleanly again.
func (w *Watcher) LastError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

// RestartNeeded lists the settings that differ between two configs but only
// take effect when drover restarts (the store, the server address, the node
// name and the board prefix).
func RestartNeeded(old, next *config.Config) []string {
	if old == nil || next == nil {
		return nil
	}
	var out []string
	if old.Store.DSN != next.Store.DSN {
		out = append(out, "store")
	}
	if old.Server.Host != next.Server.Host || old.Server.Port != next.Server.Port {
		out = append(out, "server")
	}
	if old.Dispatch.Node != next.Dispatch.Node {
		out = append(out, "dispatch.node")
	}
	if old.Board.Prefix != next.Board.Prefix {
		out = append(out, "board.prefix")
	}
	if pullSettings(old) != pullSettings(next) {
		out = append(out, "workspace.git.pull_request")
	}
	return out
}

// pullSettings is what drover serve builds its forge from at start
// (workspace.git.pull_request; the poll interval and checks are read
// live): "" when there is none.
func pullSettings(c *config.Config) string {
	if c.Workspace.Git == nil || c.Workspace.Git.PullRequests == nil {
		return ""
	}
	p := c.Workspace.Git.PullRequests
	return strings.Join([]string{p.Kind, p.Repository, p.Endpoint, p.APIKey, p.TokenEnv}, "\x00")
}
