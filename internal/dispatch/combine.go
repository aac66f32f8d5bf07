package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// combiner writes requests in groups: a request that finds nobody writing
// is written at once, with whatever queued before it; requests that arrive
// while a group is being written queue up and become the next group. No
// request waits for a group to fill, and there is no goroutine of its own:
// the caller whose request found nobody writing leads, and when its own
// group is written it hands the lead to the first request still queued.
// Routing (routeGrouped) and the runs' start and progress writes
// (applyGrouped) use one each.
type combiner[T any] struct {
	mu      sync.Mutex
	pending []*combined[T]
	busy    bool
}

type combined[T any] struct {
	v      T
	result chan error    // buffered: the request's outcome
	lead   chan struct{} // buffered: this request leads the next group
}

// do queues v and returns its outcome once a group with it is written by
// write, which returns one error per request of the group, in order. A
// group has at most max requests.
func (c *combiner[T]) do(v T, max int, write func([]T) []error) error {
	req := &combined[T]{v: v, result: make(chan error, 1), lead: make(chan struct{}, 1)}
	c.mu.Lock()
	c.pending = append(c.pending, req)
	leads := !c.busy
	c.busy = true
	c.mu.Unlock()
	if !leads {
		select {
		case err := <-req.result:
			return err
		case <-req.lead:
		}
	}
	for {
		c.mu.Lock()
		n := min(len(c.pending), max)
		group := append([]*combined[T](nil), c.pending[:n]...)
		c.pending = c.pending[n:]
		c.mu.Unlock()
		vs := make([]T, len(group))
		for i, g := range group {
			vs[i] = g.v
		}
		for i, err := range write(vs) {
			group[i].result <- err
		}
		select {
		case err := <-req.result:
			c.mu.Lock()
			if len(c.pending) > 0 {
				c.pending[0].lead <- struct{}{}
			} else {
				c.busy = false
			}
			c.mu.Unlock()
			return err
		default: // not in this group (beyond max): lead the next one too
		}
	}
}

// maxWriteGroup bounds one group of start and progress writes.
const maxWriteGroup = 500

// applyGrouped writes ch (a run's start or live figures: changes without
// guards) in a group with the other runs' writes queued meanwhile, in one
// transaction (store.ApplyAll). It returns when ch is written, so a run's
// started event is in the log before anything the run does next. The
// simulation (Options.Spawn) writes each change on its own, as its seeded
// schedule orders them.
func (d *Dispatcher) applyGrouped(ch store.Change) error {
	if d.o.Spawn != nil {
		return d.o.Store.Apply(context.Background(), ch)
	}
	return d.writes.do(ch, maxWriteGroup, func(chs []store.Change) []error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		refused, err := d.o.Store.ApplyAll(ctx, chs)
		if err != nil {
			refused = make([]error, len(chs))
			for i := range refused {
				refused[i] = err
			}
		}
		return refused
	})
}
