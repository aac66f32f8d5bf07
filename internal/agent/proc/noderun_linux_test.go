//go:build linux

package proc

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// testNode is a node whose socket leads nowhere useful: requests are
// written and never answered.
func testNode(t *testing.T) *node {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
	t.Cleanup(func() { theirs.Close() })
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &node{conn: c.(*net.UnixConn), runs: map[uint64]*nodeRun{}}
}

// sleeperInGroup starts sleep as the leader of a process group of its own.
func sleeperInGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "100")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// diedOf SIGTERMs cmd and reports the signal it died of: SIGKILL if one
// was sent before (a pending SIGKILL wins), else SIGTERM.
func diedOf(t *testing.T, cmd *exec.Cmd) syscall.Signal {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws.Signal()
}

// Once a run's status is in, drover's fallback SIGKILL of its group is
// neither armed by a late kill nor sent by a timer that was already
// armed: the group's pid may by then lead another run's session.
func TestNoFallbackKillOnceTheStatusIsIn(t *testing.T) {
	n := testNode(t)

	late := sleeperInGroup(t)
	r := &nodeRun{n: n, pid: late.Process.Pid, done: make(chan struct{})}
	r.deliver("exit", "0")
	r.kill()
	if r.fallback != nil {
		t.Error("kill after the status armed a fallback SIGKILL")
	}
	r.killGroup() // a timer armed before the status, firing after it
	if sig := diedOf(t, late); sig != syscall.SIGTERM {
		t.Errorf("the group after its run's status: died of %v, want only the test's SIGTERM", sig)
	}

	open := sleeperInGroup(t)
	r = &nodeRun{n: n, pid: open.Process.Pid, done: make(chan struct{})}
	r.kill()
	if r.fallback == nil {
		t.Fatal("kill before the status armed no fallback SIGKILL")
	}
	r.fallback.Stop()
	r.killGroup()
	if sig := diedOf(t, open); sig != syscall.SIGKILL {
		t.Errorf("the group of a run without status: died of %v, want the fallback's SIGKILL", sig)
	}
	r.end()
}
