package dispatch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// slowStore commits in 5ms, one transaction at a time (as SQLite's one
// writer), counting transactions and refusing the change of run "bad".
type slowStore struct {
	store.Store
	mu      sync.Mutex
	txs     atomic.Int64
	written sync.Map // run id → times written
}

var errRefused = errors.New("refused")

func (s *slowStore) one(ch store.Change) error {
	id := ch.Events[0].RunID
	if id == "bad" {
		return errRefused
	}
	n, _ := s.written.LoadOrStore(id, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return nil
}

func (s *slowStore) Apply(_ context.Context, ch store.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txs.Add(1)
	time.Sleep(5 * time.Millisecond)
	return s.one(ch)
}

func (s *slowStore) ApplyAll(_ context.Context, chs []store.Change) ([]error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txs.Add(1)
	time.Sleep(5 * time.Millisecond)
	out := make([]error, len(chs))
	for i, ch := range chs {
		out[i] = s.one(ch)
	}
	return out, nil
}

// Forty runs recording their start at once: each record is written once
// and its caller returns after, a refused one's error is its own, and the
// forty take a few transactions rather than forty.
func TestGroupCommitBatchesRecordsArrivingTogether(t *testing.T) {
	st := &slowStore{}
	var g groupCommit
	const runs = 40
	var wg sync.WaitGroup
	errs := make([]error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := board.NewID()
			if i == 7 {
				id = "bad"
			}
			errs[i] = g.apply(context.Background(), st, store.Change{Events: []board.Event{{RunID: id, Type: board.EvStarted}}})
			if id != "bad" {
				if n, ok := st.written.Load(id); !ok || n.(*atomic.Int64).Load() != 1 {
					t.Errorf("run %s: apply returned before its record was written once", id)
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != errors.Is(err, errRefused) {
			t.Errorf("run %d: err %v", i, err)
		}
	}
	if n := st.txs.Load(); n >= runs/2 {
		t.Errorf("%d records at once took %d transactions; want them grouped", runs, n)
	}
}
