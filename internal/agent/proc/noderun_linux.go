//go:build linux

package proc

import (
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// nodeRun is one run under the node supervisor, as drover sees it; it is
// the runHandle of a supervised run.
type nodeRun struct {
	n     *node
	id    uint64
	pid   int    // the agent's, once started (set under mu, then fixed)
	tag   string // the run's RunTagKey value, "" when it has none
	grace time.Duration
	first chan string   // the answer to start
	done  chan struct{} // closed under mu, with finished set

	mu       sync.Mutex
	notes    []string
	known    bool
	reported bool // the supervisor sent the status
	finished bool // done is closed
	code     int
	sig      syscall.Signal
	fallback *time.Timer // drover's SIGKILL to the group
	silent   *time.Timer // no status after the kill: see unreported
}

// fallbackAfter is how long after asking the supervisor to kill a run
// drover sends its own SIGKILL to the run's group.
const fallbackAfter = 3 * time.Second

func (r *nodeRun) deliver(verb, rest string) {
	switch verb {
	case "started", "notfound", "failed":
		if verb == "started" {
			pid, _ := strconv.Atoi(rest)
			r.mu.Lock()
			r.pid = pid
			r.mu.Unlock()
		}
		select {
		case r.first <- verb + " " + rest:
		default:
		}
	case "note":
		r.mu.Lock()
		r.notes = append(r.notes, rest)
		r.mu.Unlock()
	case "exit", "signal":
		v, _ := strconv.Atoi(rest)
		r.n.forget(r.id)
		r.mu.Lock()
		r.known, r.reported = true, true
		if verb == "exit" {
			r.code = v
		} else {
			r.code, r.sig = -1, syscall.Signal(v)
		}
		r.endLocked()
		r.mu.Unlock()
	}
}

// end marks the run's status known (see endLocked).
func (r *nodeRun) end() {
	r.mu.Lock()
	r.endLocked()
	r.mu.Unlock()
}

// endLocked (r.mu held) closes done and calls off drover's fallback
// SIGKILL of the group, as the group is gone or no longer the run's. The
// status, finished and done change in one critical section, kill arms the
// fallback only while !finished, and the fallback checks finished under r.mu as
// it kills: so no fallback SIGKILL is sent once the status is in, when
// the group's pid may already lead another run's session.
func (r *nodeRun) endLocked() {
	if r.finished {
		return
	}
	r.finished = true
	if r.fallback != nil {
		r.fallback.Stop()
	}
	if r.silent != nil {
		r.silent.Stop()
	}
	close(r.done)
}

// lose ends a run whose supervisor died: loudly, in its log, and with what
// containment drover can still do itself. The agent died with the
// supervisor (its parent-death signal); what it left is killed by the
// run's session, group and tag, the ways drover can find it.
func (r *nodeRun) lose(why error) {
	select {
	case r.first <- "failed " + why.Error():
	default:
	}
	r.contain(fmt.Sprintf("%v; the run's agent died with it", why), 0)
}

// unreported ends a run whose supervisor sent no status within bound of
// drover's kill: drover kills what it finds of the run itself and ends the
// run as killed by SIGKILL (as when a supervisor dies). If the agent then
// dies, the supervisor failed to reap or report it: it is taken for stuck
// and abandoned, ending its other runs too. An agent that outlives SIGKILL
// (blocked in the kernel) is no fault of the supervisor's, which is kept.
func (r *nodeRun) unreported(bound time.Duration) {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	killed := killSession(r.pid) // under r.mu: the session is still the run's
	r.mu.Unlock()
	for deadline := time.Now().Add(time.Second); processAlive(r.pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	why := fmt.Errorf("the node supervisor (pid %d) did not report the run's end within %s of the SIGKILL", r.n.pid, bound)
	if processAlive(r.pid) {
		r.contain(fmt.Sprintf("%v; the run's agent (pid %d) outlives SIGKILL (blocked in the kernel?)", why, r.pid), killed)
		return
	}
	r.contain(fmt.Sprintf("%v; drover takes it for stuck and stops it (the next run starts a new one)", why), killed)
	r.n.abandon(why)
}

// contain ends a run without its supervisor's word: drover SIGKILLs what
// it finds of the run by its session and tag, and says so after what in
// the run's log, counting the killed processes it was already told of. It holds r.mu throughout, so no status can come in
// meanwhile (and the session is still the run's); a run already ended is
// left alone.
func (r *nodeRun) contain(what string, killed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	if r.pid > 0 {
		n := killed + killSession(r.pid)
		if r.tag != "" {
			n += KillTagged(RunTagKey, r.tag)
		}
		r.notes = append(r.notes, fmt.Sprintf("%s; drover killed %d processes it found by the run's session and %s; a process that left both is no longer contained", what, n, RunTagKey))
		if !r.known {
			r.known, r.code, r.sig = true, -1, syscall.SIGKILL
		}
	}
	r.endLocked()
}

// killSession SIGKILLs every live process in session sid and returns how
// many there were.
func killSession(sid int) int {
	n := 0
	for _, p := range allProcs() {
		if p.sid == sid && p.live() {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

func (r *nodeRun) procID() int            { return r.pid }
func (r *nodeRun) ended() <-chan struct{} { return r.done }

func (r *nodeRun) status() runStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A status the supervisor sent comes after the run's tree is gone; a
	// lost supervisor leaves drover to sweep the group.
	return runStatus{known: r.known, code: r.code, sig: r.sig, notes: r.notes, contained: r.reported}
}

// term asks the supervisor to SIGTERM the run's whole tree; should the
// request not get through, drover signals the run's group itself.
func (r *nodeRun) term() {
	if r.n.send("term", r.id) != nil {
		_ = syscall.Kill(-r.pid, syscall.SIGTERM)
	}
}

// kill asks the supervisor to SIGKILL the run's whole tree, with drover's
// own SIGKILL to the group should the status not be in after
// fallbackAfter, and the run ended by drover (see unreported) should it
// not be in after the grace and reportSlack.
func (r *nodeRun) kill() string {
	_ = r.n.send("kill", r.id)
	r.mu.Lock()
	if !r.finished && r.fallback == nil {
		r.fallback = time.AfterFunc(fallbackAfter, r.killGroup)
		bound := r.grace + reportSlack
		r.silent = time.AfterFunc(bound, func() { r.unreported(bound) })
	}
	r.mu.Unlock()
	return "the supervisor is sending SIGKILL to the run's whole process tree"
}

// killGroup is drover's fallback SIGKILL to the run's group: never once
// the run's status is in (see endLocked).
func (r *nodeRun) killGroup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.finished {
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	}
}
