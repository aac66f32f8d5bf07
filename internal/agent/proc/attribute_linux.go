//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// runProcs returns the live processes of run r, and how many live
// processes might be r's but cannot be told from those of runs whose agent
// still runs.
//
// Every process of every run is below the supervisor (it is their
// subreaper), and each subtree under one of its direct children belongs to
// one run, since a process only forks its own run's processes. A subtree
// under a live agent is that agent's run's. Any other subtree (an orphan
// and what it forked) is attributed by, in order, what was attributed
// before (by pid and start time); a member in the session or process group
// of a run's agent (both are the agent's pid: agents start in a session of
// their own, and the kernel does not reuse a pid while it names a live
// group or session); a member whose environment holds a run's RunTagKey
// entry. A subtree that left both and dropped the tag (setsid env -i) is
// unknown: it belongs to a run whose agent started before it did. If no
// such run still has its agent running, it is the leftover of a run that
// is finishing and whichever finishing run asks takes it; otherwise it is
// counted as unsure and left alone until those runs end (or drover does).
func (s *super) runProcs(r *srun) (mine []procInfo, unsure int) {
	s.forks.RLock()
	defer s.forks.RUnlock()
	t := s.snaps.after(time.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[r.id] != r {
		// Reported and forgotten (a kill that outlived the run's finish):
		// whatever is still unowned now is for the runs that remain.
		return nil, 0
	}
	byLeader := make(map[int]*srun, len(s.runs))
	byTag := make(map[string]*srun, len(s.runs))
	for _, run := range s.runs {
		byLeader[run.pid] = run
		if run.tag != "" {
			byTag[run.tag] = run
		}
	}
	for _, c := range t.children(s.self) {
		if !c.live() {
			continue
		}
		sub := append([]procInfo{c}, t.below(c.pid)...)
		if a := s.byPid[c.pid]; a != nil {
			if a == r {
				mine = append(mine, sub...)
			}
			continue
		}
		owner := s.ownerOf(sub, byLeader, byTag)
		if owner == nil {
			if s.liveCandidate(c) {
				if r.exited {
					unsure += len(sub)
				}
				continue
			}
			if !r.exited {
				continue
			}
			owner = r
		}
		if owner != r {
			continue
		}
		for _, p := range sub {
			s.owner[p.key()] = r.id
		}
		mine = append(mine, sub...)
	}
	return mine, unsure
}

// ownerOf finds the run one orphaned subtree belongs to, or nil.
func (s *super) ownerOf(sub []procInfo, byLeader map[int]*srun, byTag map[string]*srun) *srun {
	for _, p := range sub {
		if id, ok := s.owner[p.key()]; ok {
			if run := s.runs[id]; run != nil {
				return run
			}
		}
		if run := byLeader[p.sid]; run != nil {
			return run
		}
		if run := byLeader[p.pgrp]; run != nil {
			return run
		}
	}
	if len(byTag) == 0 {
		return nil
	}
	for _, p := range sub {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if run := byTag[string(kv)]; run != nil {
				return run
			}
		}
	}
	return nil
}

// liveCandidate reports whether an unattributed orphan may belong to a run
// whose agent still runs: one that started no later than it.
func (s *super) liveCandidate(c procInfo) bool {
	for _, run := range s.runs {
		if !run.exited && run.start <= c.start {
			return true
		}
	}
	return false
}
