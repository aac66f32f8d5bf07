package proc

import (
	"runtime"
	"syscall"
)

func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// lockThread locks the calling goroutine to its thread and returns without
// unlocking: when the goroutine ends, the runtime terminates the thread.
func lockThread() { runtime.LockOSThread() }
