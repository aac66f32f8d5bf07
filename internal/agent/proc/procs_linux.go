//go:build linux

package proc

import (
	"os"
	"strconv"
	"strings"
)

// procInfo is one process as /proc/PID/stat shows it.
type procInfo struct {
	pid, ppid, pgrp, sid int
	start                uint64 // clock ticks after boot
	flags                uint64 // the kernel's PF_* flags
	state                byte
}

func (p procInfo) live() bool { return p.state != 'Z' && p.state != 'X' }

// procKey names one process across pid reuse: its pid and start time.
type procKey struct {
	pid   int
	start uint64
}

func (p procInfo) key() procKey { return procKey{p.pid, p.start} }

// allProcs reads every process's parent, group, session, start time and
// state from /proc.
func allProcs() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// readProc reads one process's /proc/PID/stat.
func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// "pid (comm) state ppid pgrp session … starttime …"; comm may contain
	// spaces and parens.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	flags, err5 := strconv.ParseUint(f[6], 10, 64)
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgrp: pgrp, sid: sid, start: start, flags: flags, state: f[0][0]}, true
}

// procTree is one snapshot of /proc indexed by parent.
type procTree struct {
	byParent map[int][]procInfo
}

func snapshot() procTree {
	t := procTree{byParent: map[int][]procInfo{}}
	for _, p := range allProcs() {
		t.byParent[p.ppid] = append(t.byParent[p.ppid], p)
	}
	return t
}

// children are root's direct children, zombies included.
func (t procTree) children(root int) []procInfo { return t.byParent[root] }

// below lists the live processes under root (root excluded), parents
// before their children.
func (t procTree) below(root int) []procInfo {
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range t.byParent[parent] {
			queue = append(queue, c.pid)
			if c.live() {
				out = append(out, c)
			}
		}
	}
	return out
}

// liveDescendants lists the processes below root in the parent tree that
// are neither zombies nor dead.
func liveDescendants(root int) []procInfo { return snapshot().below(root) }
