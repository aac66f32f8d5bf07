package proc

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is matched (errors.Is) by every failure to find or execute the
// agent's program: missing file, not in PATH, not executable, a directory, or a
// missing #! interpreter. The dispatcher classifies it as config_error.
var ErrNotFound = errors.New("agent executable not found")

// NotFoundError is the typed form of ErrNotFound; it names the path that was
// asked for and why it could not be used.
type NotFoundError struct {
	Path string // the command as configured
	Err  error  // the underlying reason
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("agent executable %q not found: %v", e.Path, e.Err)
}

// Is reports true for ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Unwrap returns the underlying reason.
func (e *NotFoundError) Unwrap() error { return e.Err }

// Cause is a context cancellation cause that names why drover stopped a run,
// e.g. cancel(proc.NewCause("shutdown", nil)) on a context made with
// context.WithCancelCause. Run reports Reason as Exit.KilledFor.
type Cause struct {
	Reason string // snake_case: shutdown, spend, cancel, lease_lost, …
	Err    error  // optional detail
}

// NewCause returns a *Cause for use with a CancelCauseFunc.
func NewCause(reason string, detail error) error { return &Cause{Reason: reason, Err: detail} }

func (c *Cause) Error() string {
	if c.Err != nil {
		return c.Reason + ": " + c.Err.Error()
	}
	return c.Reason
}

// Unwrap returns the detail.
func (c *Cause) Unwrap() error { return c.Err }

// knownReasons are the words policy.Signals.KilledFor understands; a cause
// error whose message starts with one of them followed by ":" reports it.
var knownReasons = map[string]bool{"timeout": true, "stall": true, "cancel": true, "shutdown": true, "spend": true}

// causeReason names why ctx ended, for Exit.KilledFor:
//   - a *Cause anywhere in the cause chain reports its Reason;
//   - an error in the chain whose whole message is one snake_case word
//     (errors.New("shutdown")), or whose message is "<known word>: …",
//     reports that word;
//   - a deadline (context.DeadlineExceeded) reports "timeout";
//   - anything else reports "cancel".
func causeReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	var c *Cause
	if errors.As(cause, &c) && c.Reason != "" {
		return c.Reason
	}
	if w := reasonWord(cause); w != "" {
		return w
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return "timeout"
	}
	return "cancel"
}

// reasonWord walks err's chain (depth first) for an error naming a reason.
func reasonWord(err error) string {
	if err == nil || err == context.Canceled || err == context.DeadlineExceeded {
		return ""
	}
	msg := err.Error()
	if isWord(msg) {
		return msg
	}
	if head, _, ok := strings.Cut(msg, ":"); ok && knownReasons[head] {
		return head
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return reasonWord(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if w := reasonWord(e); w != "" {
				return w
			}
		}
	}
	return ""
}

// isWord reports whether s is a short snake_case word.
func isWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || (r == '_' && i > 0)) {
			return false
		}
	}
	return true
}
