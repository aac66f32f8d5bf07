package dispatch

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// slowNodes widens the window between reading the node rows and writing one,
// as a loaded machine does.
type slowNodes struct{ store.Store }

func (s slowNodes) ListNodes(ctx context.Context) ([]store.Node, error) {
	time.Sleep(200 * time.Millisecond)
	return s.Store.ListNodes(ctx)
}

// Two dispatchers with one node name starting at the same moment: exactly
// one runs, the other stops with ErrNodeTaken, however slow the store.
func TestOneNodeNameOneDispatcher(t *testing.T) {
	w := newWorld(t, 3)
	st := slowNodes{w.st}
	errs := make([]error, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range errs {
		d, err := New(Options{Store: st, Config: w.cfg, Node: "same", LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = d.Run(ctx) }()
	}
	time.Sleep(1500 * time.Millisecond)
	cancel()
	wg.Wait()
	taken := 0
	for _, err := range errs {
		if errors.Is(err, ErrNodeTaken) {
			taken++
		}
	}
	if taken != 1 {
		t.Fatalf("Run errors %v: want exactly one ErrNodeTaken", errs)
	}
}
