package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent/proc"
	"github.com/drover-dev/drover/internal/board"
)

func hookEnv() []string { return append(proc.BaseEnv(), "DROVER_CARD_IDENTIFIER=DRV-9") }

func TestHookRunsInDirWithEnv(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	err := RunHook(context.Background(), HookAfterCreate, `echo "$DROVER_CARD_IDENTIFIER" > made; pwd`, dir, hookEnv(), 0, &log)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made")); string(b) != "DRV-9\n" {
		t.Errorf("hook wrote %q", b)
	}
	if !strings.Contains(log.String(), "hook after_create in "+dir) || !strings.Contains(log.String(), dir+"\n") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestHookFailureNamesHookAndTail(t *testing.T) {
	err := RunHook(context.Background(), HookBeforeRun, "echo fetching; echo 'fatal: repository not found' >&2; exit 128", t.TempDir(), hookEnv(), 0, nil)
	var he *HookError
	if !errors.As(err, &he) || he.Exit.Code != 128 {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"hook before_run", "exited with code 128", "fetching", "fatal: repository not found"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, proc.NotePrefix) {
		t.Errorf("error carries drover's own notes: %q", msg)
	}
}

func TestHookTimeoutKillsHook(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	start := time.Now()
	err := RunHook(context.Background(), HookAfterCreate, fmt.Sprintf("sleep 100 & echo $! > %s; wait", pidfile), dir, hookEnv(), 300*time.Millisecond, nil)
	var he *HookError
	if !errors.As(err, &he) || he.Exit.KilledFor != "timeout" || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	b, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatal("no pid")
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] != 'Z' {
			t.Errorf("hook's child %d still alive: %s", pid, st)
		}
	}
}

func TestEmptyHookIsNoop(t *testing.T) {
	if err := (Hooks{}).Run(context.Background(), HookAfterRun, "/nonexistent", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestShouldRemove(t *testing.T) {
	for _, c := range []struct {
		policy string
		role   board.Role
		want   bool
	}{
		{CleanupNever, board.RoleDone, false},
		{CleanupOnDone, board.RoleDone, true},
		{CleanupOnDone, board.RoleBlocked, false},
		{CleanupOnDone, board.RoleCompleted, false},
		{CleanupOnSink, board.RoleDone, true},
		{CleanupOnSink, board.RoleBlocked, true},
		{CleanupOnSink, board.RoleCancelled, true},
		{CleanupOnSink, board.RoleParked, false},
		{CleanupOnSink, board.RoleEligible, false},
		{"", board.RoleDone, false},
		{"always", board.RoleDone, false},
	} {
		if got := ShouldRemove(c.policy, c.role); got != c.want {
			t.Errorf("ShouldRemove(%q, %q) = %v", c.policy, c.role, got)
		}
	}
}
