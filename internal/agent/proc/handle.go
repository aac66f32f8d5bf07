package proc

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runHandle is Run's grip on a started program: directly drover's child,
// or a run of the node supervisor (Linux).
type runHandle interface {
	procID() int            // the program's pid, also its process group id
	ended() <-chan struct{} // closed once the program's status is known
	status() runStatus      // after ended
	term()                  // SIGTERM to the run's processes
	kill() (how string)     // SIGKILL to the run's processes; how says who does it
}

// runStatus is how the program ended, and what its supervisor noted.
type runStatus struct {
	known bool // the program's status is known
	code  int
	sig   syscall.Signal // 0 unless it died of a signal
	notes []string
	// contained: nothing of the run is left alive (its supervisor saw to
	// it), so drover need not sweep the process group itself.
	contained bool
}

// directRun is a program drover started itself, in its own process group.
type directRun struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startDirect starts cmd from a thread that stays locked until the child
// is reaped, so the parent-death signal fires only when drover itself dies
// (see sysProcAttr).
func startDirect(cmd *exec.Cmd) (*directRun, error) {
	d := &directRun{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(d.done)
	}()
	return d, <-started
}

func (d *directRun) procID() int            { return d.cmd.Process.Pid }
func (d *directRun) ended() <-chan struct{} { return d.done }
func (d *directRun) term()                  { _ = syscall.Kill(-d.procID(), syscall.SIGTERM) }

func (d *directRun) kill() string {
	_ = syscall.Kill(-d.procID(), syscall.SIGKILL)
	return "sending SIGKILL to the process group"
}

func (d *directRun) status() runStatus {
	ps := d.cmd.ProcessState
	if ps == nil {
		return runStatus{code: -1}
	}
	st := runStatus{known: true, code: ps.ExitCode()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.sig = ws.Signal()
	}
	return st
}
