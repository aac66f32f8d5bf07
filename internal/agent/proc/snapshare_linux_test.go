//go:build linux

package proc

import (
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every caller sees the processes that existed when it asked (a snapshot
// that began after), and a burst of callers shares a few reads of /proc.
func TestSnapShareSeesWhatExistedWhenAsked(t *testing.T) {
	var reads atomic.Int64
	takeSnapshot = func() procTree { reads.Add(1); time.Sleep(20 * time.Millisecond); return snapshot() }
	defer func() { takeSnapshot = snapshot }()
	var c snapShare
	const callers = 40
	var wg sync.WaitGroup
	errs := make(chan string, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("sleep", "5")
			if err := cmd.Start(); err != nil {
				errs <- err.Error()
				return
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			tree := c.after(time.Now())
			for _, p := range tree.children(os.Getpid()) {
				if p.pid == cmd.Process.Pid {
					return
				}
			}
			errs <- "a child started before the caller asked is missing from its snapshot"
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := reads.Load(); n >= callers/2 {
		t.Errorf("%d callers at once read /proc %d times; want them to share reads", callers, n)
	}
}
