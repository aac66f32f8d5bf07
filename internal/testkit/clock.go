package testkit

import (
	"sync"
	"time"
)

// Clock is a fake clock that moves only when told. It is safe for
// concurrent use; its Now method value (clk.Now) fits wherever the code
// under test takes a `func() time.Time`.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
