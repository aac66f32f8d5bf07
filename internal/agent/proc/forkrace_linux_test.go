//go:build linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// registerPauseEnv, in a supervisor started by pausedSupervisor, is how
// long it waits between forking an agent and registering its run, for a
// run whose env holds pauseMe.
const (
	registerPauseEnv = "DROVER_TEST_REGISTER_PAUSE"
	pauseMe          = "DROVER_TEST_PAUSE_ME=1"
)

func init() {
	d, err := time.ParseDuration(os.Getenv(registerPauseEnv))
	if err != nil {
		return
	}
	beforeRegister = func(r *srun) {
		if slices.Contains(r.spec.Env, pauseMe) {
			time.Sleep(d)
		}
	}
}

// pausedSupervisor makes the test's runs start under a new node supervisor
// that waits pause between forking the agent of a run with pauseMe and
// registering the run, and the runs after the test under a new ordinary one.
func pausedSupervisor(t *testing.T, pause time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "supervisor")
	body := fmt.Sprintf("#!/bin/sh\n%s=%s exec '%s' \"$@\"\n", registerPauseEnv, pause, exe)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	fresh := func() {
		nodeMu.Lock()
		n := theNode
		nodeMu.Unlock()
		if n != nil {
			n.abandon(errors.New("the test starts another supervisor"))
		}
	}
	fresh()
	supervisor.Store(script)
	t.Cleanup(func() { fresh(); UseSupervisor() })
}

// An agent that has just been forked, and is not yet known as its run's,
// is not taken for the leftover of a run that is ending at that moment:
// run A's agent exits leaving a process that ignores SIGTERM, so A's end
// looks for what A left through its grace and SIGKILLs it after; run B's
// agent is forked half-way through that grace and registered long after
// it, and B runs to its end untouched.
func TestAnAgentBeingStartedIsNoLeftover(t *testing.T) {
	pausedSupervisor(t, 2*time.Second)
	dir := t.TempDir()
	a := shSpec(t, fmt.Sprintf("(trap '' TERM; exec sleep 30) & echo $! > %s/leftover; exit 0", dir))
	a.Grace = time.Second
	doneA := runAsync(context.Background(), a)
	left := readPid(t, dir+"/leftover")
	t.Cleanup(func() { _ = killPid(left) })
	time.Sleep(500 * time.Millisecond)
	b := shSpec(t, "sleep 1; echo finished")
	b.Env = append(b.Env, pauseMe)
	doneB := runAsync(context.Background(), b)
	for name, done := range map[string]<-chan ranAsync{"A": doneA, "B": doneB} {
		select {
		case r := <-done:
			if name == "B" && (r.err != nil || r.ex.Signaled || r.ex.Code != 0 || r.ex.StdoutTail != "finished\n") {
				t.Errorf("run B: exit %+v, err %v; want it to finish untouched\nlog:\n%s", r.ex, r.err, readLog(t, b))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("run %s did not end", name)
		}
	}
	waitGone(t, "run A's leftover", left)
}

// A run already reported and forgotten takes nothing: a kill that outlived
// its run's finish does not claim the unowned processes the runs still
// registered will take at their own end, with their grace.
func TestAForgottenRunTakesNoLeftover(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s := &super{self: os.Getpid(), runs: map[uint64]*srun{}, byPid: map[int]*srun{}, owner: map[procKey]uint64{}}
	r := &srun{id: 7, pid: -1, exited: true}
	takes := func() bool {
		mine, _ := s.runProcs(r)
		return slices.ContainsFunc(mine, func(p procInfo) bool { return p.pid == cmd.Process.Pid })
	}
	if takes() {
		t.Error("a forgotten run took an unowned child")
	}
	s.runs[r.id] = r
	if !takes() {
		t.Error("a finishing run did not take an unowned child (the test shows nothing)")
	}
}
