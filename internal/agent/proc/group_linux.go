//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts the child in its own process group (so the whole tree can
// be signalled at once) and asks the kernel to SIGKILL it if its parent dies.
//
// Pdeathsig caveat: the kernel delivers it when the *thread* that forked the
// child exits, not the process. Go may retire OS threads, so Run forks from a
// goroutine that holds runtime.LockOSThread until the child has been reaped;
// that thread therefore lives exactly as long as the child. Pdeathsig reaches
// only the direct child: that is why, under UseSupervisor, agents are the
// node supervisor's children instead (it watches its socket to drover and
// kills every run's tree itself when drover dies).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupAlive reports whether any process of group pgid is still running.
// kill(-pgid, 0) succeeds for zombies too, and an orphaned grandchild stays a
// zombie until init reaps it (never, under an init that does not reap), so a
// positive answer is confirmed by looking for a non-zombie member in /proc.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	return liveMember(pgid)
}

// liveMember scans /proc for a process in group pgid that is not a zombie.
// When /proc cannot be read it answers true (assume alive).
func liveMember(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pg, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads the state and process group of pid from /proc/<pid>/stat.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp …"; comm may contain spaces and parens.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}
