//go:build linux

package proc

import (
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// reaper owns the thread that forks every agent (an agent's parent-death
// signal follows that thread, which therefore never exits) and reaps every
// child, re-parented orphans included, so none stays a zombie.
func (s *super) reaper() {
	runtime.LockOSThread()
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	tick := time.NewTicker(time.Second)
	for {
		select {
		case r := <-s.starts:
			s.startAgent(r)
		case <-chld:
		case <-tick.C:
		}
		s.reap()
	}
}

// beforeRegister, nil but in a test, runs between an agent's fork and its
// run's registration, the window in which runProcs must not take the agent
// for a leftover.
var beforeRegister func(*srun)

// startAgent starts r's agent, on the reaper thread.
func (s *super) startAgent(r *srun) {
	stdin := r.files[0]
	if stdin == nil {
		stdin = s.null
	}
	// From the fork until the run is registered its agent is a child of
	// the supervisor that no run owns: a finishing run's runProcs would
	// take it for that run's leftover and kill it. runProcs waits for this
	// (and for an exec that hangs, on a hung mount: the supervisor is then
	// stuck, and drover gives up on it after startBound).
	s.forks.Lock()
	p, err := os.StartProcess(r.spec.Path, r.spec.Argv, &os.ProcAttr{
		Dir:   r.spec.Dir,
		Env:   r.spec.Env,
		Files: []*os.File{stdin, r.files[1], r.files[2]},
		Sys:   &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	for _, f := range r.files {
		if f != nil {
			f.Close()
		}
	}
	r.files = nil
	if err != nil {
		s.forks.Unlock()
		verb := "failed"
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) {
			verb = "notfound"
		}
		s.send(r.id, verb, err.Error())
		return
	}
	r.pid = p.Pid
	_ = p.Release() // reaped by wait4 below, not by os.Process
	if info, ok := readProc(r.pid); ok {
		r.start = info.start
	}
	if beforeRegister != nil {
		beforeRegister(r)
	}
	s.mu.Lock()
	s.runs[r.id] = r
	s.byPid[r.pid] = r
	s.mu.Unlock()
	s.forks.Unlock()
	s.send(r.id, "started", strconv.Itoa(r.pid))
	if s.warn != "" {
		s.note(r, "%s", s.warn)
	}
}

// reap collects every child that has ended; an agent's end starts its
// run's finish.
func (s *super) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		s.mu.Lock()
		r := s.byPid[pid]
		if r != nil {
			delete(s.byPid, pid)
			r.exited = true
		}
		s.mu.Unlock()
		if r != nil {
			go s.finish(r, ws)
		}
	}
}

// finish stops what r's agent left running (SIGTERM, the grace, SIGKILL),
// then reports the agent's status and forgets the run.
func (s *super) finish(r *srun, ws syscall.WaitStatus) {
	left, unsure := s.runProcs(r)
	if len(left) > 0 {
		s.note(r, "the agent exited but left %d processes running; sending SIGTERM to them", len(left))
		signalAll(left, syscall.SIGTERM)
		deadline := time.NewTimer(r.spec.Grace)
		defer deadline.Stop()
	wait:
		for {
			select {
			case <-deadline.C:
				s.note(r, "processes left after a grace of %s; sending SIGKILL", r.spec.Grace)
				break wait
			case <-r.killNow:
				break wait
			case <-time.After(50 * time.Millisecond):
			}
			if left, _ = s.runProcs(r); len(left) == 0 {
				break
			}
		}
		unsure = s.killRun(r)
	}
	if unsure > 0 {
		s.note(r, "%d processes that left the run's session and dropped its %s cannot be told from those of runs still running; they are stopped when those runs end", unsure, RunTagKey)
	}
	s.mu.Lock()
	delete(s.runs, r.id)
	for k, id := range s.owner {
		if id == r.id {
			delete(s.owner, k)
		}
	}
	s.mu.Unlock()
	if ws.Signaled() {
		s.send(r.id, "signal", strconv.Itoa(int(ws.Signal())))
	} else {
		s.send(r.id, "exit", strconv.Itoa(ws.ExitStatus()))
	}
}

func (s *super) lookup(id uint64) *srun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// term sends SIGTERM to run id's whole tree: its process group at once
// while the agent lives, and every other process of the run one by one.
func (s *super) term(id uint64) {
	r := s.lookup(id)
	if r == nil {
		return
	}
	s.mu.Lock()
	alive := !r.exited
	s.mu.Unlock()
	if alive {
		_ = syscall.Kill(-r.pid, syscall.SIGTERM)
	}
	ps, _ := s.runProcs(r)
	for _, p := range ps {
		if !alive || p.pgrp != r.pid {
			_ = syscall.Kill(p.pid, syscall.SIGTERM)
		}
	}
}

// kill SIGKILLs run id's whole tree now, also while its finish waits out
// the grace.
func (s *super) kill(id uint64) {
	r := s.lookup(id)
	if r == nil {
		return
	}
	r.killOnce.Do(func() { close(r.killNow) })
	s.killRun(r)
}

// killRun SIGKILLs r's processes until none is left alive (a process
// forking while it is killed is caught on the next pass), for at most 5s,
// and returns the last count of processes that may be r's (see runProcs).
func (s *super) killRun(r *srun) (unsure int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		ps, u := s.runProcs(r)
		if len(ps) == 0 {
			return u
		}
		signalAll(ps, syscall.SIGKILL)
		time.Sleep(10 * time.Millisecond)
	}
	_, unsure = s.runProcs(r)
	return unsure
}

// killBelow SIGKILLs every descendant of root until none is left alive,
// for at most 5s.
func killBelow(root int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		ds := liveDescendants(root)
		if len(ds) == 0 {
			return
		}
		signalAll(ds, syscall.SIGKILL)
		time.Sleep(10 * time.Millisecond)
	}
}

func signalAll(ps []procInfo, sig syscall.Signal) {
	for _, p := range ps {
		_ = syscall.Kill(p.pid, sig)
	}
}
