//go:build unix && !linux

package proc

import (
	"sync/atomic"
	"time"
)

var supervisor atomic.Value // never set outside Linux

// SuperviseArg is the hidden first argument of the node supervisor. The
// supervisor is Linux only (it needs a child subreaper and /proc).
const SuperviseArg = "__supervise"

// UseSupervisor does nothing outside Linux: agents run directly.
func UseSupervisor() {}

// Supervise is Linux only; elsewhere it refuses.
func Supervise(args []string) int { return 2 }

// startSupervised never supervises outside Linux.
func startSupervised(path string, s Spec, grace time.Duration, p *pipes) (runHandle, bool, error) {
	return nil, false, nil
}
