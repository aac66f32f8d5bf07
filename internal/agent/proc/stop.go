package proc

import (
	"os"
	"syscall"
	"time"
)

// stopper sends SIGTERM, then SIGKILL after the grace, to one run's
// processes, and remembers why.
type stopper struct {
	// h signals the run's processes: its process group, or, under the
	// node supervisor, its whole tree (also what left the group). Once the
	// program has ended it is nil and pgid is signalled directly.
	h      runHandle
	pgid   int
	grace  time.Duration
	sink   *logSink
	reason string      // first reason given to stop; "" if never stopped
	termAt time.Time   // when SIGTERM was sent; zero if not yet
	timer  *time.Timer // fires at termAt+grace
	killed bool
}

// stop records reason (the first one wins) and starts terminating the group.
func (st *stopper) stop(reason, note string) {
	if st.reason == "" {
		st.reason = reason
	}
	if !st.termAt.IsZero() {
		return
	}
	st.sink.note(note + "; sending SIGTERM to the process group")
	st.term()
}

func (st *stopper) term() {
	st.termAt = time.Now()
	if st.h != nil {
		st.h.term()
	} else {
		syscall.Kill(-st.pgid, syscall.SIGTERM)
	}
	st.timer = time.NewTimer(st.grace)
}

// killC fires when the grace after SIGTERM is over (nil before SIGTERM).
func (st *stopper) killC() <-chan time.Time {
	if st.timer == nil || st.killed {
		return nil
	}
	return st.timer.C
}

// kill sends SIGKILL to the group once.
func (st *stopper) kill(why string) {
	if st.killed {
		return
	}
	st.killed = true
	if st.h != nil {
		st.sink.note(why + "; " + st.h.kill())
		return
	}
	st.sink.note(why + "; sending SIGKILL to the process group")
	syscall.Kill(-st.pgid, syscall.SIGKILL)
}

// done releases the stopper when nothing of the run is left to sweep.
func (st *stopper) done() {
	st.h = nil
	if st.timer != nil {
		st.timer.Stop()
	}
}

// sweep runs after the group leader has been reaped: whatever is left in the
// group is terminated (TERM, grace, KILL) and waited for, so nothing started
// by the agent in its group outlives the run.
func (st *stopper) sweep() {
	st.h = nil // the program has ended: what is left gets the group's signals
	defer func() {
		if st.timer != nil {
			st.timer.Stop()
		}
	}()
	if !groupAlive(st.pgid) {
		return
	}
	if st.termAt.IsZero() {
		st.sink.note("the agent exited but left processes running in its process group; sending SIGTERM")
		st.term()
	}
	if !st.killed {
		deadline := st.termAt.Add(st.grace)
		for groupAlive(st.pgid) && time.Now().Before(deadline) {
			time.Sleep(25 * time.Millisecond)
		}
		if !groupAlive(st.pgid) {
			return
		}
		st.kill("processes left in the group after a grace of " + st.grace.String())
	}
	// SIGKILL cannot be ignored; give the kernel a moment to finish them.
	for deadline := time.Now().Add(time.Second); groupAlive(st.pgid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// pipes are the child's stdio pipes; the parent keeps the other ends.
type pipes struct {
	outR, outW, errR, errW, inR, inW *os.File
}

func openPipes(stdin bool) (*pipes, error) {
	p := &pipes{}
	var err error
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.closeChild()
		p.closeParent()
		return nil, err
	}
	if stdin {
		if p.inR, p.inW, err = os.Pipe(); err != nil {
			p.closeChild()
			p.closeParent()
			return nil, err
		}
	}
	return p, nil
}

// closeChild closes the ends the child inherited (after Start, or on failure).
func (p *pipes) closeChild() {
	for _, f := range []**os.File{&p.outW, &p.errW, &p.inR} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// closeParent closes drover's ends; blocked reads and writes on them return.
func (p *pipes) closeParent() {
	for _, f := range []*os.File{p.outR, p.errR, p.inW} {
		if f != nil {
			f.Close()
		}
	}
}
