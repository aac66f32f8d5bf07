//go:build linux

package proc

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestKillTaggedKillsTheTaggedGroupOnly(t *testing.T) {
	tag := "DROVER_RUN_ID=test-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	start := func(env string) *exec.Cmd {
		c := exec.Command("sh", "-c", "sleep 60 & wait")
		c.Env = []string{"PATH=/usr/bin:/bin", env}
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _, _ = c.Process.Wait() })
		return c
	}
	tagged := start(tag)
	other := start("DROVER_RUN_ID=someone-else")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && !liveMember(tagged.Process.Pid) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let sh fork its sleep
	if n := KillTagged("DROVER_RUN_ID", tag[len("DROVER_RUN_ID="):]); n < 1 {
		t.Fatalf("KillTagged matched %d processes, want at least the shell", n)
	}
	_, _ = tagged.Process.Wait()
	for time.Now().Before(deadline) && groupAlive(tagged.Process.Pid) {
		time.Sleep(10 * time.Millisecond)
	}
	if groupAlive(tagged.Process.Pid) {
		t.Errorf("the tagged group survived")
	}
	if !groupAlive(other.Process.Pid) {
		t.Errorf("an untagged group was killed")
	}
}

// The restart sweep follows the tree: a child of a tagged process that
// dropped its environment and left the group is found through its parent.
func TestKillTaggedKillsTheTaggedTree(t *testing.T) {
	tag := "test-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	dir := t.TempDir()
	c := exec.Command("sh", "-c", "setsid env -i sleep 60 & echo $! > "+dir+"/pid; wait")
	c.Env = []string{"PATH=/usr/bin:/bin", "DROVER_RUN_ID=" + tag}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _, _ = c.Process.Wait() })
	child := readPid(t, dir+"/pid")
	t.Cleanup(func() { _ = killPid(child) })
	time.Sleep(100 * time.Millisecond) // let env exec sleep
	if !processAlive(child) {
		t.Fatalf("child %d should be alive", child)
	}
	KillTagged("DROVER_RUN_ID", tag)
	_, _ = c.Process.Wait()
	for deadline := time.Now().Add(3 * time.Second); processAlive(child) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if processAlive(child) {
		t.Errorf("the untagged child %d of a tagged process survived the sweep", child)
	}
}
