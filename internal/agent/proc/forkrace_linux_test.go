//go:build linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// registerPauseEnv sets registerPause in a supervisor started by
// pausedSupervisor.
const registerPauseEnv = "DROVER_TEST_REGISTER_PAUSE"

func init() {
	if d, err := time.ParseDuration(os.Getenv(registerPauseEnv)); err == nil {
		registerPause = d
	}
}

// pausedSupervisor makes the test's runs start under a new node supervisor
// that waits pause between forking each agent and registering its run, and
// the runs after the test under a new ordinary one.
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
// is not taken for the leftover of a run that is being killed at that
// moment: run A's agent exits leaving a process that ignores SIGTERM, so
// A's end SIGKILLs it after the grace; run B's agent is forked just before
// that and registered well after it, and B runs to its end untouched.
func TestAnAgentBeingStartedIsNoLeftover(t *testing.T) {
	pausedSupervisor(t, 2*time.Second)
	dir := t.TempDir()
	a := shSpec(t, fmt.Sprintf("(trap '' TERM; exec sleep 30) & echo $! > %s/leftover; exit 0", dir))
	a.Grace = time.Second
	doneA := runAsync(context.Background(), a)
	left := readPid(t, dir+"/leftover")
	t.Cleanup(func() { _ = killPid(left) })
	// A's grace ends about a second after its agent exits; B's agent is
	// forked half a second in and registered two seconds later.
	time.Sleep(500 * time.Millisecond)
	b := shSpec(t, "sleep 0.2; echo finished")
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
