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
	tag := []byte(key + "=" + value)
	self := os.Getpid()
	selfGroup := syscall.Getpgrp()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
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
