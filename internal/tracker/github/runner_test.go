package github_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
)

// A webhook's Wake syncs at once, long before the next poll.
func TestRunnerWakeSyncsNow(t *testing.T) {
	w := newWorld(t)
	w.issue("first", `{}`)
	r := &tracker.Runner{Store: w.Store, Syncer: w.Sync, Projector: w.Proj, Deliverer: w.Del,
		Interval: func() time.Duration { return time.Hour }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitCards := func(n int) {
		t.Helper()
		for range 1000 {
			cs, _ := w.Store.ListCards(context.Background(), store.CardFilter{Tracked: true})
			if len(cs) == n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("never %d cards", n)
	}
	waitCards(1)
	w.issue("second", `{}`)
	r.Wake()
	waitCards(2)
	_ = fmt.Sprint()
}
