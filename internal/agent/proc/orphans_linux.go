//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// KillTagged SIGKILLs every live process whose environment holds key=value,
// together with its process group, and returns how many processes matched.
//
// It is the restart half of containment. The node supervisor (see
// Supervise) kills every run's tree when drover dies, so normally nothing
// is left; this sweep covers what outlived it (the supervisor killed
// together with drover, or agents started without one). Every run is
// started with DROVER_RUN_ID in its environment, so on recovery the
// dispatcher finds what is left of a run by that tag, not by a pid that may
// have been reused, and kills each tagged process with its whole descendant
// tree (untagged children included) and its process group. Processes of
// other users (unreadable environ) and this process's own group are
// skipped; the node supervisor carries no tag.
func KillTagged(key, value string) int {
	if key == "" || value == "" {
		return 0
	}
	return killTagged(key, value, FindTagged(key)[value])
}

// Tagged is what one scan of /proc found: the live processes whose
// environment holds key=VALUE, by VALUE. A recovery that takes back many
// runs at once scans once and kills each run's leftovers from it, instead of
// reading every process's environment once per run.
type Tagged map[string][]int

// FindTagged scans /proc once for the live processes whose environment
// holds an entry key=…, other than this process.
func FindTagged(key string) Tagged {
	t := Tagged{}
	if key == "" {
		return t
	}
	prefix := []byte(key + "=")
	add := func(pid int, env []byte) {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok && len(v) > 0 {
				t[string(v)] = append(t[string(v)], pid)
				return
			}
		}
	}
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return t
	}
	var blank []int // live processes whose environment read empty
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := readEnviron(pid)
		switch {
		case err != nil:
		case len(env) == 0:
			if userProcess(pid) {
				blank = append(blank, pid)
			}
		default:
			add(pid, env)
		}
	}
	for _, wait := range execWaits {
		if len(blank) == 0 {
			break
		}
		time.Sleep(wait)
		var still []int
		for _, pid := range blank {
			if env, err := readEnviron(pid); err == nil && len(env) == 0 {
				still = append(still, pid)
			} else if err == nil {
				add(pid, env)
			}
		}
		blank = still
	}
	return t
}

// execWaits are the pauses before an empty environment is read again. A
// process in the middle of an execve shows an empty environ for a moment
// (the kernel switches to the new image before it records where the
// image's environment lies), so a leftover that execs as the scan passes
// would be missed (a tagged process that execs over and over was missed by
// 26 of 300 scans here). A live process with no environment at all (env
// -i) costs a scan their sum, 15 ms; the node supervisor has one entry for
// that reason.
var execWaits = []time.Duration{time.Millisecond, 4 * time.Millisecond, 10 * time.Millisecond}

// readEnviron reads pid's environment (a variable for tests).
var readEnviron = func(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
}

// environOf is pid's environment, read again through execWaits while it
// is empty and pid a live user process (see execWaits).
func environOf(pid int) ([]byte, error) {
	env, err := readEnviron(pid)
	for _, wait := range execWaits {
		if err != nil || len(env) > 0 || !userProcess(pid) {
			break
		}
		time.Sleep(wait)
		env, err = readEnviron(pid)
	}
	return env, err
}

// userProcess reports whether pid is alive and not a kernel thread (whose
// environment is always empty).
func userProcess(pid int) bool {
	p, ok := readProc(pid)
	return ok && p.live() && p.flags&pfKthread == 0
}

const pfKthread = 0x00200000 // PF_KTHREAD in /proc/PID/stat's flags

// Kill SIGKILLs what is left of the run tagged key=value, each tagged
// process with its descendants and its process group, and returns how many
// tagged processes matched. A run the scan found nothing of has nothing
// left (what a dead run's processes start later descends from one the scan
// saw). A run it found something of is looked for again now, since one of
// those may have forked and exited since: the children, tagged too, are
// found by this second scan. Each is read again before it is killed: a pid
// reused since carries no such tag and is left alone.
func (t Tagged) Kill(key, value string) int {
	if key == "" || value == "" || len(t[value]) == 0 {
		return 0
	}
	return killTagged(key, value, FindTagged(key)[value])
}

// killTagged kills the pids that still carry key=value.
func killTagged(key, value string, pids []int) int {
	tag := []byte(key + "=" + value)
	selfGroup := syscall.Getpgrp()
	n := 0
	for _, pid := range pids {
		env, err := environOf(pid)
		if err != nil || !hasEnvEntry(env, tag) {
			continue
		}
		state, pgid, ok := procStat(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		n++
		// Descendants first, while the parent links still lead to them: a
		// child that dropped the tag (env -i) or left the group (setsid) is
		// still below the tagged process, the run's supervisor above all.
		for _, d := range liveDescendants(pid) {
			_ = syscall.Kill(d.pid, syscall.SIGKILL)
		}
		if pgid > 1 && pgid != selfGroup {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return n
}

// hasEnvEntry reports whether the NUL-separated environ holds entry exactly.
func hasEnvEntry(environ, entry []byte) bool {
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return true
		}
	}
	return false
}
