//go:build linux

package bench

import (
	"fmt"
	"syscall"
)

// Per agent at once: drover holds its stdout and stderr pipes, its stdin
// pipe while the prompt is written, and its log; the agent is a shell and
// its sleep (two processes, counted by RLIMIT_NPROC for the user). The
// spare covers the store, the supervisor socket and the runtime.
const (
	fdsPerAgent   = 5
	procsPerAgent = 3
	spareFDs      = 512
	spareProcs    = 512
)

// raiseLimits raises the soft RLIMIT_NOFILE and RLIMIT_NPROC to what
// agents at once need, up to the hard limits, or says which limit is too
// low and how to raise it.
func raiseLimits(agents int) error {
	if err := raise(syscall.RLIMIT_NOFILE, "RLIMIT_NOFILE (open files)", "ulimit -n", uint64(agents*fdsPerAgent+spareFDs), agents); err != nil {
		return err
	}
	const rlimitNproc = 6 // RLIMIT_NPROC on Linux
	return raise(rlimitNproc, "RLIMIT_NPROC (processes of this user, every process of theirs counted)", "ulimit -u", uint64(agents*procsPerAgent+spareProcs), agents)
}

func raise(res int, name, shell string, need uint64, agents int) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(res, &l); err != nil {
		return fmt.Errorf("bench: reading %s: %w", name, err)
	}
	if l.Cur >= need {
		return nil
	}
	if l.Max < need {
		return fmt.Errorf("bench: %d agents at once need %s of at least %d; its hard limit here is %d: raise it (%s %d as root, LimitNOFILE=/LimitNPROC= in a unit, or /etc/security/limits.conf) or pass fewer --agents/--starts",
			agents, name, need, l.Max, shell, need)
	}
	l.Cur = need
	if err := syscall.Setrlimit(res, &l); err != nil {
		return fmt.Errorf("bench: raising %s to %d: %w", name, need, err)
	}
	return nil
}
