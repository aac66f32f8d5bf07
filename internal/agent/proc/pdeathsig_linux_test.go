//go:build linux

package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestHelperDrover is not a test: TestAgentDiesWithDrover runs the test binary
// as a stand-in drover that starts an agent and then gets SIGKILLed.
func TestHelperDrover(t *testing.T) {
	pidfile := os.Getenv("DROVER_PROC_HELPER_PIDFILE")
	if pidfile == "" {
		t.Skip("helper process only")
	}
	// Keep other goroutines busy locking and exiting threads, which must not
	// fire the agent's parent-death signal early.
	for i := 0; i < 4; i++ {
		go func() {
			for {
				done := make(chan struct{})
				go func() { lockAndExit(); close(done) }()
				<-done
			}
		}()
	}
	Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "echo $$ > " + pidfile + "; exec sleep 100"},
		Env: []string{"PATH=" + os.Getenv("PATH")}})
}

// lockAndExit ends a goroutine while it holds its thread, so Go retires it.
func lockAndExit() {
	lockThread()
}

func TestAgentDiesWithDrover(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperDrover$", "-test.count=1")
	helper.Env = append(os.Environ(), "DROVER_PROC_HELPER_PIDFILE="+pidfile)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidfile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// The agent survives the helper's thread churn…
	time.Sleep(300 * time.Millisecond)
	if !processAlive(pid) {
		t.Fatal("agent died while drover was alive (parent-death signal fired on a thread exit)")
	}
	// …and dies with it.
	helper.Process.Kill()
	helper.Wait()
	for deadline := time.Now().Add(3 * time.Second); processAlive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agent %d outlived its drover", pid)
		}
	}
}
