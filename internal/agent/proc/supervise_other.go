//go:build unix && !linux

package proc

import (
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

var supervisor atomic.Value // never set outside Linux

// SuperviseArg is the hidden first argument of a run's supervisor. The
// supervisor is Linux only (it needs a child subreaper and /proc).
const SuperviseArg = "__supervise"

// UseSupervisor does nothing outside Linux: agents run directly.
func UseSupervisor() {}

// Supervise is Linux only; elsewhere it refuses.
func Supervise(args []string) int { return 2 }

type supervision struct {
	lifeW  *os.File
	report chan supervisorReport
}

type supervisorReport struct {
	notes    []string
	exited   bool
	code     int
	signaled bool
	signal   syscall.Signal
}

func supervise(cmd *exec.Cmd, grace time.Duration) (*supervision, error) { return nil, nil }
func (sv *supervision) started(path string) error                        { return nil }
func (sv *supervision) failed()                                          {}
