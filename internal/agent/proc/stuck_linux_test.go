//go:build linux

package proc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shortSlack shortens the wait for a status after drover's kill for one
// test.
func shortSlack(t *testing.T) {
	slack := reportSlack
	reportSlack = 300 * time.Millisecond
	t.Cleanup(func() { reportSlack = slack })
}

// stopSupervisor SIGSTOPs the node supervisor sup (it is then alive but
// answers nothing), with a SIGKILL at the end of the test whatever happens.
func stopSupervisor(t *testing.T, sup int) {
	t.Helper()
	t.Cleanup(func() { _ = killPid(sup) })
	if err := syscall.Kill(sup, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

// nextRunWorks runs a short program and checks it gets a new supervisor.
func nextRunWorks(t *testing.T, stuck int) {
	t.Helper()
	ex, err := Run(context.Background(), shSpec(t, "echo $PPID"))
	if err != nil || ex.Code != 0 {
		t.Fatalf("next run: exit %+v, err %v", ex, err)
	}
	if ppid, _ := strconv.Atoi(strings.TrimSpace(ex.StdoutTail)); ppid == stuck || ppid <= 1 {
		t.Errorf("the next run's parent is %d (the stuck supervisor was %d)", ppid, stuck)
	}
	waitGone(t, "the stuck supervisor", stuck)
}

// A supervisor that is alive but stuck does not hang a run past its
// timeout: after drover's kill and no status within the bound, drover
// kills the run's session itself, ends the run as killed by SIGKILL with a
// note naming the supervisor, stops that supervisor, and the next run gets
// a new one.
func TestStuckSupervisorEndsRunsLoudly(t *testing.T) {
	shortSlack(t)
	dir := t.TempDir()
	s := shSpec(t, fmt.Sprintf("trap '' TERM; echo $$ > %s/agent; while :; do sleep 0.1; done", dir))
	s.Timeout = time.Second
	done := runAsync(context.Background(), s)
	agent := readPid(t, dir+"/agent")
	t.Cleanup(func() { _ = killPid(agent) })
	sup := parentOf(t, agent)
	stopSupervisor(t, sup)
	var r ranAsync
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end with its supervisor stopped")
	}
	if r.err != nil || !r.ex.Signaled || r.ex.KilledFor != "timeout" {
		t.Errorf("exit %+v, err %v; want killed by a signal for the timeout", r.ex, r.err)
	}
	want := "the node supervisor (pid " + strconv.Itoa(sup) + ") did not report the run's end"
	if log := readLog(t, s); !strings.Contains(log, want) || !strings.Contains(log, "killed by signal killed") {
		t.Errorf("log lacks %q and the SIGKILL:\n%s", want, log)
	}
	waitGone(t, "the run's agent", agent)
	nextRunWorks(t, sup)
}

// A start the supervisor does not answer fails as a start failure naming
// the node supervisor, and the next run gets a new one.
func TestStuckSupervisorFailsStart(t *testing.T) {
	ex, err := Run(context.Background(), shSpec(t, "echo $PPID"))
	if err != nil || ex.Code != 0 {
		t.Fatalf("first run: exit %+v, err %v", ex, err)
	}
	sup, _ := strconv.Atoi(strings.TrimSpace(ex.StdoutTail))
	stopSupervisor(t, sup)
	// Short for this start only: a new supervisor (the next run's) may
	// take longer than this to come up on a busy machine.
	bound := startBound
	startBound = 300 * time.Millisecond
	t.Cleanup(func() { startBound = bound })
	done := runAsync(context.Background(), shSpec(t, "echo never"))
	var r ranAsync
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the start did not end with its supervisor stopped")
	}
	startBound = bound
	want := "the node supervisor (pid " + strconv.Itoa(sup) + ") answered no start"
	if r.err == nil || !strings.Contains(r.err.Error(), want) {
		t.Errorf("start: err %v, want one containing %q", r.err, want)
	}
	nextRunWorks(t, sup)
}
