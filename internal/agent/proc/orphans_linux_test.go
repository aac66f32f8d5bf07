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
