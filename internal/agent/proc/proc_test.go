package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// shSpec runs script under sh with a minimal explicit environment.
func shSpec(t *testing.T, script string) Spec {
	t.Helper()
	return Spec{
		Path:    "sh",
		Args:    []string{"-c", script},
		Dir:     t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		LogPath: filepath.Join(t.TempDir(), "logs", "run.log"),
		Grace:   300 * time.Millisecond,
	}
}

// readPid waits for the script to write a pid into file.
func readPid(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

// treeScript starts a background grandchild, records its pid, then waits.
func treeScript(pidfile string) string {
	return fmt.Sprintf("sleep 100 & echo $! > %s; sleep 100", pidfile)
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	if processAlive(pid) {
		t.Errorf("process %d still alive after Run returned", pid)
	}
}

func readLog(t *testing.T, s Spec) string {
	t.Helper()
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTimeoutKillsWholeTree(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := shSpec(t, treeScript(pidfile))
	s.Timeout = 500 * time.Millisecond
	var pid int
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	pid = readPid(t, pidfile)
	if ex.KilledFor != "timeout" || !ex.Signaled || ex.Code != -1 {
		t.Fatalf("exit = %+v, want killed for timeout by a signal", ex)
	}
	if ex.Duration > 3*time.Second {
		t.Errorf("took %s", ex.Duration)
	}
	assertGone(t, pid)
	if log := readLog(t, s); !strings.Contains(log, "[drover: timeout: still running after 500ms; sending SIGTERM") {
		t.Errorf("log lacks the timeout note:\n%s", log)
	}
}

func TestTermIgnoredThenKilled(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	// Both the shell and its background child ignore SIGTERM.
	s := shSpec(t, "trap '' TERM; "+treeScript(pidfile))
	s.Timeout = 200 * time.Millisecond
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.KilledFor != "timeout" || !ex.Signaled {
		t.Fatalf("exit = %+v", ex)
	}
	if ex.Duration < 500*time.Millisecond {
		t.Errorf("returned after %s, before timeout+grace", ex.Duration)
	}
	assertGone(t, readPid(t, pidfile))
	if log := readLog(t, s); !strings.Contains(log, "SIGKILL") {
		t.Errorf("log lacks the SIGKILL note:\n%s", log)
	}
}

func TestStallFiresWithoutOutput(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := shSpec(t, "echo started; "+treeScript(pidfile))
	s.StallTimeout = 400 * time.Millisecond
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.KilledFor != "stall" {
		t.Fatalf("exit = %+v, want stall", ex)
	}
	if ex.StdoutTail != "started\n" {
		t.Errorf("stdout tail %q", ex.StdoutTail)
	}
	assertGone(t, readPid(t, pidfile))
}

func TestSteadyOutputDoesNotStall(t *testing.T) {
	// 25 lines 100ms apart: 2.5s in total, over three stall timeouts, but
	// never 800ms without output (a margin for loaded CI machines). Stderr
	// output counts as much as stdout.
	s := shSpec(t, "i=0; while [ $i -lt 25 ]; do i=$((i+1)); echo $i; echo e$i >&2; sleep 0.1; done")
	s.StallTimeout = 800 * time.Millisecond
	var mu sync.Mutex
	var lines []string
	s.OnStdoutLine = func(b []byte) { mu.Lock(); lines = append(lines, string(b)); mu.Unlock() }
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.KilledFor != "" || ex.Code != 0 || ex.Signaled {
		t.Fatalf("exit = %+v, want a clean exit", ex)
	}
	if len(lines) != 25 || lines[0] != "1" || lines[24] != "25" {
		t.Errorf("lines = %q", lines)
	}
}

func TestCancelReportsCause(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{NewCause("shutdown", nil), "shutdown"},
		{errors.New("spend"), "spend"},
		{fmt.Errorf("stopping: %w", errors.New("spend: card cap $5 reached")), "spend"},
		{nil, "cancel"},
		{errors.New("operator pressed the button"), "cancel"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			s := shSpec(t, treeScript(pidfile))
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() { readPid(t, pidfile); cancel(tc.cause) }()
			ex, err := Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if ex.KilledFor != tc.want {
				t.Fatalf("KilledFor = %q, want %q", ex.KilledFor, tc.want)
			}
			assertGone(t, readPid(t, pidfile))
		})
	}
}

func TestDeadlineIsTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ex, err := Run(ctx, shSpec(t, "sleep 100"))
	if err != nil || ex.KilledFor != "timeout" {
		t.Fatalf("exit = %+v, err = %v", ex, err)
	}
}

func TestAlreadyCancelledDoesNotStart(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(NewCause("shutdown", nil))
	marker := filepath.Join(t.TempDir(), "ran")
	ex, err := Run(ctx, shSpec(t, "touch "+marker))
	if err != nil || ex.KilledFor != "shutdown" || ex.Code != -1 {
		t.Fatalf("exit = %+v, err = %v", ex, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("process ran")
	}
}

func TestLeftoverProcessesAreSwept(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The background sleep keeps stdout open after the shell exits 0.
	s := shSpec(t, fmt.Sprintf("sleep 100 & echo $! > %s; echo done", pidfile))
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 0 || ex.KilledFor != "" || ex.StdoutTail != "done\n" {
		t.Fatalf("exit = %+v", ex)
	}
	if ex.Duration > 2*time.Second {
		t.Errorf("took %s", ex.Duration)
	}
	assertGone(t, readPid(t, pidfile))
}

func TestPipeHeldOutsideGroupDoesNotHang(t *testing.T) {
	withoutSupervisor(t) // a supervisor stops such a process (next test)
	pidfile := filepath.Join(t.TempDir(), "pid")
	// setsid leaves the process group but keeps our stdout pipe open.
	s := shSpec(t, fmt.Sprintf("setsid sh -c 'echo $$ > %s; exec sleep 100' & sleep 0.2; echo bye", pidfile))
	ex, err := Run(context.Background(), s)
	pid := readPid(t, pidfile)
	t.Cleanup(func() { _ = killPid(pid) })
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 0 || ex.Duration > pipeDrain+2*time.Second {
		t.Fatalf("exit = %+v", ex)
	}
	if log := readLog(t, s); !strings.Contains(log, "stopped reading") {
		t.Errorf("log lacks the drain note:\n%s", log)
	}
}

func TestLogCapWhileProcessCompletes(t *testing.T) {
	// 1.2 MB of output against a 10 000 byte cap: the log stops at the cap,
	// the pipe is still drained (the writer is not blocked) and the exit is clean.
	s := shSpec(t, "yes 0123456789abcdef | head -n 70000; echo last line; echo to stderr >&2")
	s.MaxLogBytes = 10000
	var lines int
	s.OnStdoutLine = func([]byte) { lines++ }
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 0 || ex.KilledFor != "" || !ex.LogTruncated {
		t.Fatalf("exit = %+v", ex)
	}
	if lines != 70001 {
		t.Errorf("saw %d lines, want 70001", lines)
	}
	if !strings.HasSuffix(ex.StdoutTail, "0123456789abcdef\nlast line\n") || len(ex.StdoutTail) > TailBytes {
		t.Errorf("stdout tail (%d bytes) ends %q", len(ex.StdoutTail), ex.StdoutTail[max(0, len(ex.StdoutTail)-40):])
	}
	log := readLog(t, s)
	if !strings.Contains(log, "[drover: log truncated after 10000 bytes") {
		t.Errorf("no truncation marker")
	}
	// Everything before the marker is agent output (plus the newline drover
	// adds to end the cut line); after it only drover's own notes follow.
	cut := strings.Index(log, NotePrefix+"log truncated")
	if agent := strings.TrimSuffix(log[:cut], "\n"); len(agent) != 10000 {
		t.Errorf("log holds %d agent bytes before the marker, want 10000", len(agent))
	}
	for _, l := range strings.SplitAfter(log[cut:], "\n") {
		if l != "" && !strings.HasPrefix(l, NotePrefix) {
			t.Errorf("agent output after the marker: %q", l)
		}
	}
	if len(log) > 10000+1024 {
		t.Errorf("log is %d bytes", len(log))
	}
}

func TestEnvIsExplicit(t *testing.T) {
	t.Setenv("DROVER_TEST_PARENT_SECRET", "leaked")
	s := shSpec(t, `echo "secret=[$DROVER_TEST_PARENT_SECRET] foo=[$FOO]"`)
	s.Env = append(s.Env, "FOO=bar")
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.StdoutTail != "secret=[] foo=[bar]\n" {
		t.Errorf("stdout = %q", ex.StdoutTail)
	}
}

func TestStdinAndExitCode(t *testing.T) {
	s := shSpec(t, `cat; echo oops >&2; exit 3`)
	s.Stdin = []byte("hello\nworld")
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 3 || ex.Signaled || ex.KilledFor != "" {
		t.Fatalf("exit = %+v", ex)
	}
	if ex.StdoutTail != "hello\nworld" || ex.StderrTail != "oops\n" {
		t.Errorf("tails %q %q", ex.StdoutTail, ex.StderrTail)
	}
	log := readLog(t, s)
	for _, want := range []string{"hello\n", "world\n", StderrPrefix + "oops\n", "[drover: exit code 3 after"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestNotFound(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "agent.sh")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	badInterp := filepath.Join(dir, "bad.sh")
	os.WriteFile(badInterp, []byte("#!/nonexistent/interpreter\n"), 0o755)
	for _, p := range []string{"drover-no-such-binary", "/nonexistent/agent", "./agent.sh", noexec, dir, badInterp, ""} {
		_, err := Run(context.Background(), Spec{Path: p, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}})
		var nf *NotFoundError
		if !errors.Is(err, ErrNotFound) || !errors.As(err, &nf) || nf.Path != p {
			t.Errorf("Run(%q) err = %v, want a *NotFoundError", p, err)
		}
	}
}

func TestOnStartAndOnOutput(t *testing.T) {
	s := shSpec(t, "echo a; echo b >&2")
	var pid, outputs int
	s.OnStart = func(p int) { pid = p }
	s.OnOutput = func() { outputs++ }
	if _, err := Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if pid <= 0 || outputs == 0 {
		t.Errorf("pid %d, outputs %d", pid, outputs)
	}
}

// Under a supervisor, a process that left the agent's group and dropped its
// environment is still part of the run: it is stopped when the agent exits.
func TestSupervisorStopsWhatLeftTheGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := shSpec(t, fmt.Sprintf("setsid env -i sh -c 'echo $$ > %s; exec sleep 100' & sleep 0.2; echo bye", pidfile))
	s.Grace = 200 * time.Millisecond
	ex, err := Run(context.Background(), s)
	pid := readPid(t, pidfile)
	t.Cleanup(func() { _ = killPid(pid) })
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 0 || ex.Duration > 2*time.Second {
		t.Fatalf("exit = %+v", ex)
	}
	assertGone(t, pid)
	if log := readLog(t, s); !strings.Contains(log, "left 1 processes running") {
		t.Errorf("log lacks the supervisor's note:\n%s", log)
	}
}
