package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
)

// Hook names, as in WORKFLOW.md's hooks section.
const (
	HookAfterCreate  = "after_create"  // once, when the workspace is created; failure: workspace_setup
	HookBeforeRun    = "before_run"    // before every run; failure: workspace_setup
	HookAfterRun     = "after_run"     // after every run; failure is logged, not fatal
	HookBeforeRemove = "before_remove" // before cleanup; failure is logged, not fatal
)

// DefaultHookTimeout bounds a hook when Hooks.Timeout is 0.
const DefaultHookTimeout = 60 * time.Second

// hookTailBytes is how much of a failed hook's output its error carries.
const hookTailBytes = 1024

// Hooks are shell scripts run in the workspace at points of its lifecycle
// (WORKFLOW.md's hooks: section, Symphony's; drover passes them to the shell
// as written, $VARS unexpanded).
type Hooks struct {
	AfterCreate  string        `json:"after_create" yaml:"after_create" cfg:"verbatim"`
	BeforeRun    string        `json:"before_run" yaml:"before_run" cfg:"verbatim"`
	AfterRun     string        `json:"after_run" yaml:"after_run" cfg:"verbatim"`
	BeforeRemove string        `json:"before_remove" yaml:"before_remove" cfg:"verbatim"`
	Timeout      time.Duration `json:"timeout" yaml:"timeout"` // per hook run; 0 = DefaultHookTimeout
}

// Script returns the script configured for a hook name ("" if none).
func (h Hooks) Script(name string) string {
	switch name {
	case HookAfterCreate:
		return h.AfterCreate
	case HookBeforeRun:
		return h.BeforeRun
	case HookAfterRun:
		return h.AfterRun
	case HookBeforeRemove:
		return h.BeforeRemove
	}
	return ""
}

// Run runs the named hook with h's timeout; a hook with no script is a no-op.
func (h Hooks) Run(ctx context.Context, name, dir string, env []string, logw io.Writer) error {
	return RunHook(ctx, name, h.Script(name), dir, env, h.Timeout, logw)
}

// HookError is a hook that failed to start, exited non-zero or was stopped.
type HookError struct {
	Hook string
	Exit proc.Exit // zero when the hook never started
	Err  error     // set when the hook never started
	Tail string    // the last lines of its output (stderr lines marked)
}

func (e *HookError) Error() string {
	var what string
	switch {
	case e.Err != nil:
		what = "could not start: " + e.Err.Error()
	case e.Exit.KilledFor == "timeout":
		what = "timed out and was killed"
	case e.Exit.KilledFor != "":
		what = "was stopped (" + e.Exit.KilledFor + ")"
	case e.Exit.Signaled:
		what = "died of a signal"
	default:
		what = fmt.Sprintf("exited with code %d", e.Exit.Code)
	}
	msg := "hook " + e.Hook + " " + what
	if e.Tail != "" {
		msg += ": " + e.Tail
	}
	return msg
}

// Unwrap returns the start error, if any.
func (e *HookError) Unwrap() error { return e.Err }

// RunHook runs script with `/bin/sh -lc` in dir, with exactly env as its
// environment (start from proc.BaseEnv() and add DROVER_*), in its own
// process group, killed (TERM, then KILL) when timeout (0 = the default)
// passes or ctx ends. Output goes to logw (may be nil). An empty script is a
// no-op. Failure is a *HookError naming the hook, with its output's tail.
func RunHook(ctx context.Context, name, script, dir string, env []string, timeout time.Duration, logw io.Writer) error {
	if strings.TrimSpace(script) == "" {
		return nil
	}
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	tail := &noteFreeTail{max: hookTailBytes}
	w := io.Writer(tail)
	if logw != nil {
		fmt.Fprintf(logw, "%shook %s in %s]\n", proc.NotePrefix, name, dir)
		w = io.MultiWriter(logw, tail)
	}
	ex, err := proc.Run(ctx, proc.Spec{
		Path:        "/bin/sh",
		Args:        []string{"-lc", script},
		Dir:         dir,
		Env:         env,
		Log:         w,
		MaxLogBytes: -1,
		Timeout:     timeout,
		Grace:       2 * time.Second,
	})
	if err != nil {
		return &HookError{Hook: name, Err: err}
	}
	if ex.Code == 0 && !ex.Signaled && ex.KilledFor == "" {
		return nil
	}
	return &HookError{Hook: name, Exit: ex, Tail: tail.String()}
}

// noteFreeTail keeps the last max bytes of a script's output, without
// drover's own "[drover: …]" lines (the log sink writes every line whole).
type noteFreeTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *noteFreeTail) Write(p []byte) (int, error) {
	if bytes.HasPrefix(bytes.TrimLeft(p, "\n"), []byte(proc.NotePrefix)) {
		return len(p), nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4*t.max {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// text is the tail as it was written, cut at a line start.
func (t *noteFreeTail) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), "")
}

// String is the tail on one line ("; " between lines), cut at a line start.
func (t *noteFreeTail) String() string {
	var lines []string
	for _, l := range strings.Split(t.text(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
