//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
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
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return t
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok && len(v) > 0 {
				t[string(v)] = append(t[string(v)], pid)
				break
			}
		}
	}
	return t
}

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
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
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
