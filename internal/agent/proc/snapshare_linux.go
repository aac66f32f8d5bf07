//go:build linux

package proc

import (
	"sync"
	"time"
)

// snapShare lets the runs that finish at once share /proc snapshots: each
// caller gets a snapshot that began after it asked, as if it had taken
// one itself, but a burst of K finishing runs reads /proc a few times
// rather than K times (each read is every process's stat file). The zero
// value is ready.
type snapShare struct {
	mu  sync.Mutex
	cur *sharedSnap
}

// takeSnapshot reads /proc (a variable for tests).
var takeSnapshot = snapshot

type sharedSnap struct {
	began time.Time
	done  chan struct{} // closed once tree is set
	tree  procTree
}

// after returns a snapshot of /proc that began at or after asked. Its only
// caller, runProcs, holds super.forks for reading, so every snapshot is
// taken while no agent is between its fork and its registration.
func (c *snapShare) after(asked time.Time) procTree {
	c.mu.Lock()
	for {
		s := c.cur
		if s == nil {
			break
		}
		select {
		case <-s.done:
			if !s.began.Before(asked) {
				c.mu.Unlock()
				return s.tree
			}
		default:
			// In flight: wait for it; it serves the caller if it began
			// after the caller asked, else the caller takes the next.
			c.mu.Unlock()
			<-s.done
			if !s.began.Before(asked) {
				return s.tree
			}
			c.mu.Lock()
			if c.cur != s {
				continue // another caller started a newer one
			}
		}
		break
	}
	s := &sharedSnap{began: time.Now(), done: make(chan struct{})}
	c.cur = s
	c.mu.Unlock()
	s.tree = takeSnapshot()
	close(s.done)
	return s.tree
}
