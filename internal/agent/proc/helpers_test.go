package proc

import (
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestMain makes the test binary a supervisor as drover's main does, so
// every test here runs its processes supervised, as drover does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		os.Exit(Supervise(os.Args[2:]))
	}
	UseSupervisor()
	os.Exit(m.Run())
}

func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// lockThread locks the calling goroutine to its thread and returns without
// unlocking: when the goroutine ends, the runtime terminates the thread.
func lockThread() { runtime.LockOSThread() }

// withoutSupervisor runs the rest of the test with agents started directly.
func withoutSupervisor(t *testing.T) {
	supervisor.Store("")
	t.Cleanup(UseSupervisor)
}
