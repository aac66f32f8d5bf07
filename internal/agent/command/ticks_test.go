package command

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
)

// One hub reports every registered watcher that has news, none after its
// remove returned, and stops its goroutine once none is left.
func TestTickHubReportsRegisteredWatchersOnly(t *testing.T) {
	h := &tickHub{every: 5 * time.Millisecond}
	var calls [3]atomic.Int64
	ws := make([]*watcher, 3)
	for i := range ws {
		ws[i] = &watcher{fn: func(agent.Progress) { calls[i].Add(1) }}
		h.add(ws[i])
	}
	feed := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
			for _, w := range ws {
				w.line([]byte("news"))
			}
		}
	}
	feed(50 * time.Millisecond)
	h.remove(ws[0])
	removed := calls[0].Load()
	feed(50 * time.Millisecond)
	if got := calls[0].Load(); got != removed {
		t.Errorf("a removed watcher was reported %d more times", got-removed)
	}
	for i := 1; i < 3; i++ {
		if calls[i].Load() < 3 {
			t.Errorf("watcher %d reported %d times in 100ms of news at a 5ms interval", i, calls[i].Load())
		}
	}
	h.remove(ws[1])
	h.remove(ws[2])
	for deadline := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
		h.mu.Lock()
		running := h.running
		h.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub's goroutine still runs with no watcher")
		}
	}
}
