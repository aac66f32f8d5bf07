//go:build linux

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ranAsync is the outcome of a Run started in the background.
type ranAsync struct {
	ex  Exit
	err error
}

func runAsync(ctx context.Context, s Spec) <-chan ranAsync {
	c := make(chan ranAsync, 1)
	go func() { ex, err := Run(ctx, s); c <- ranAsync{ex, err} }()
	return c
}

// parentOf is pid's parent as /proc says.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	p, ok := readProc(pid)
	if !ok {
		t.Fatalf("process %d is gone", pid)
	}
	return p.ppid
}

func tagged(s Spec, id string) Spec {
	s.Env = append(s.Env, RunTagKey+"="+id+"-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	return s
}

func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(3 * time.Second); processAlive(pid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("%s: process %d still alive", what, pid)
				break
			}
		}
	}
}

func assertAlive(t *testing.T, what string, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if !processAlive(pid) {
			t.Errorf("%s: process %d is gone", what, pid)
		}
	}
}

// Two runs at once share one supervisor; the leftovers of the one that
// ends first (an orphan in its session without the run's tag, a child in a
// session of its own that kept the tag) are stopped at its end, and nothing
// of the other run is touched, its own orphans included.
func TestRunsShareOneSupervisor(t *testing.T) {
	dir := t.TempDir()
	b := tagged(shSpec(t, fmt.Sprintf(`( sh -c 'echo $$ > %[1]s/b-orphan; exec sleep 100' & )
setsid env -i sh -c 'echo $$ > %[1]s/b-away; exec sleep 100' &
echo $$ > %[1]s/b-agent; exec sleep 100`, dir)), "b")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bDone := runAsync(ctx, b)
	bAgent, bOrphan, bAway := readPid(t, dir+"/b-agent"), readPid(t, dir+"/b-orphan"), readPid(t, dir+"/b-away")
	sup := parentOf(t, bAgent)

	a := tagged(shSpec(t, fmt.Sprintf(`( env -i sh -c 'echo $$ > %[1]s/a-orphan; exec sleep 100' & )
setsid sh -c 'echo $$ > %[1]s/a-tagged; exec sleep 100' &
sleep 0.3; echo bye`, dir)), "a")
	var aParent int
	a.OnStart = func(pid int) { aParent = parentOf(t, pid) }
	ex, err := Run(context.Background(), a)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run a: exit %+v, err %v", ex, err)
	}
	if aParent != sup || parentOf(t, bOrphan) != sup {
		t.Errorf("supervisors: run a's agent under %d, run b's agent and orphan under %d and %d", aParent, sup, parentOf(t, bOrphan))
	}
	aOrphan, aTagged := readPid(t, dir+"/a-orphan"), readPid(t, dir+"/a-tagged")
	t.Cleanup(func() { _ = killPid(aOrphan); _ = killPid(aTagged) })
	assertGone(t, aOrphan)
	assertGone(t, aTagged)
	if log := readLog(t, a); !strings.Contains(log, "left 2 processes running") {
		t.Errorf("run a's log lacks the supervisor's note:\n%s", log)
	}
	assertAlive(t, "run b after run a ended", bAgent, bOrphan, bAway)

	cancel()
	r := <-bDone
	if r.err != nil || r.ex.KilledFor != "cancel" {
		t.Fatalf("run b: exit %+v, err %v", r.ex, r.err)
	}
	assertGone(t, bAgent)
	assertGone(t, bOrphan)
	assertGone(t, bAway)
}

// An orphan that left its run's session and dropped its tag while another
// run started before it still runs cannot be attributed: it is not killed
// at its run's end (it might be the other run's), the log says so, and it
// is stopped when the other run ends.
func TestUnattributableOrphanWaitsForTheOtherRuns(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bDone := runAsync(ctx, shSpec(t, "echo $$ > "+dir+"/b-agent; exec sleep 100"))
	bAgent := readPid(t, dir+"/b-agent")
	time.Sleep(20 * time.Millisecond) // a later start time than b's agent, in clock ticks

	a := shSpec(t, fmt.Sprintf("setsid env -i sh -c 'echo $$ > %s/lost; exec sleep 100' & sleep 0.2; echo bye", dir))
	ex, err := Run(context.Background(), a)
	lost := readPid(t, dir+"/lost")
	t.Cleanup(func() { _ = killPid(lost) })
	if err != nil || ex.Code != 0 {
		t.Fatalf("run a: exit %+v, err %v", ex, err)
	}
	assertAlive(t, "the unattributable orphan after its run", lost)
	if log := readLog(t, a); !strings.Contains(log, "cannot be told from those of runs still running") {
		t.Errorf("run a's log lacks the note on the orphan:\n%s", log)
	}
	cancel()
	<-bDone
	assertGone(t, bAgent)
	waitGone(t, "the orphan after the other run ended", lost)
}

// TestHelperDroverTwoRuns is not a test: TestBothTreesDieWithDrover runs
// the test binary as a stand-in drover with two runs, then SIGKILLs it.
func TestHelperDroverTwoRuns(t *testing.T) {
	dir := os.Getenv("DROVER_PROC_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	done := make(chan struct{})
	for _, n := range []string{"1", "2"} {
		script := fmt.Sprintf(`setsid env -i sh -c 'echo $$ > %[1]s/away%[2]s; exec sleep 100' &
(sleep 100 & echo $! > %[1]s/orphan%[2]s)
echo $$ > %[1]s/agent%[2]s; exec sleep 100`, dir, n)
		go func() {
			Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", script}, Env: []string{"PATH=" + os.Getenv("PATH")}})
			done <- struct{}{}
		}()
	}
	<-done
	<-done
}

func TestBothTreesDieWithDrover(t *testing.T) {
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperDroverTwoRuns$", "-test.count=1")
	helper.Env = append(os.Environ(), "DROVER_PROC_HELPER_DIR="+dir)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range []string{"agent1", "orphan1", "away1", "agent2", "orphan2", "away2"} {
		pid := readPid(t, filepath.Join(dir, f))
		t.Cleanup(func() { _ = killPid(pid) })
		pids = append(pids, pid)
	}
	sup := parentOf(t, pids[0])
	if parentOf(t, pids[3]) != sup || sup == helper.Process.Pid {
		t.Fatalf("the agents' parents are %d and %d, want one supervisor (not drover %d)", sup, parentOf(t, pids[3]), helper.Process.Pid)
	}
	time.Sleep(200 * time.Millisecond)
	assertAlive(t, "while drover runs", pids...)
	helper.Process.Kill()
	helper.Wait()
	waitGone(t, "after drover was killed", append(pids, sup)...)
}

// A supervisor that dies fails its runs loudly: the run ends at once with a
// note saying so, drover kills what it still finds of the run (its session),
// and the next run gets a new supervisor.
func TestSupervisorDeathFailsRunsLoudly(t *testing.T) {
	dir := t.TempDir()
	s := shSpec(t, fmt.Sprintf("(sleep 100 & echo $! > %[1]s/orphan); echo $$ > %[1]s/agent; exec sleep 100", dir))
	done := runAsync(context.Background(), s)
	agent, orphan := readPid(t, dir+"/agent"), readPid(t, dir+"/orphan")
	t.Cleanup(func() { _ = killPid(agent); _ = killPid(orphan) })
	sup := parentOf(t, agent)
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var r ranAsync
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end after its supervisor died")
	}
	if r.err != nil || !r.ex.Signaled {
		t.Errorf("exit %+v, err %v; want killed by a signal", r.ex, r.err)
	}
	if log := readLog(t, s); !strings.Contains(log, "the node supervisor (pid "+strconv.Itoa(sup)+") is gone") {
		t.Errorf("log lacks the supervisor's death:\n%s", log)
	}
	waitGone(t, "the run after its supervisor died", agent, orphan)

	next := shSpec(t, "echo $PPID")
	ex, err := Run(context.Background(), next)
	if err != nil || ex.Code != 0 {
		t.Fatalf("next run: exit %+v, err %v", ex, err)
	}
	if ppid, _ := strconv.Atoi(strings.TrimSpace(ex.StdoutTail)); ppid == sup || ppid <= 1 {
		t.Errorf("the next run's parent is %d (the dead supervisor was %d)", ppid, sup)
	}
}

// A relative program in a relative working directory runs as resolve
// found it, relative to drover's working directory, under the supervisor.
func TestRelativeDirAndProgram(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("ws", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("ws/agent.sh", []byte("#!/bin/sh\npwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ex, err := Run(context.Background(), Spec{Path: "./agent.sh", Dir: "ws", Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil || ex.Code != 0 {
		t.Fatalf("exit %+v, err %v", ex, err)
	}
	if got := strings.TrimSpace(ex.StdoutTail); filepath.Base(got) != "ws" {
		t.Errorf("ran in %q, want ws", got)
	}
}
