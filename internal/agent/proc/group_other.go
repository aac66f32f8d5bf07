//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the child in its own process group. Pdeathsig is Linux
// only, so elsewhere an agent can outlive a crashed drover.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether any process of group pgid can still be signalled
// (zombies included: there is no portable /proc to tell them apart).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}

// processAlive reports whether pid can still be signalled.
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
