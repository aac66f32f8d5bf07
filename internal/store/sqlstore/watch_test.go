package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestWatchSeesAnotherHandleAtOnce: a write by another handle (another
// process) right after Watch returns must wake the watcher. The first
// data_version reading used to happen 100ms after Watch, so a write in that
// window became the baseline and was never signalled: a dispatcher started
// just before `drover card create` slept a whole poll interval.
func TestWatchSeesAnotherHandleAtOnce(t *testing.T) {
	for _, be := range testkit.Backends {
		t.Run(string(be), func(t *testing.T) {
			dsn := testkit.DSN(t, be)
			a, b := testkit.Open(t, dsn), testkit.Open(t, dsn)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := a.Watch(ctx)
			if _, err := b.CreateCard(ctx, "DRV", board.Card{Title: "x", State: "ready"}, "test"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatal("a write by another handle right after Watch was not signalled")
			}
		})
	}
}
