package board_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

// TestNewIDMonotonicAndConcurrencySafe: ids drawn from several goroutines at
// once are all distinct, each goroutine sees them strictly increasing, and
// all of them are lower-case 26-character ULIDs.
func TestNewIDMonotonicAndConcurrencySafe(t *testing.T) {
	const workers, per = 8, 2000
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				got[w] = append(got[w], board.NewID())
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for w, seq := range got {
		for i, id := range seq {
			if len(id) != 26 || id != strings.ToLower(id) {
				t.Fatalf("id %q is not a lower-case ULID", id)
			}
			if seen[id] {
				t.Fatalf("id %s issued twice", id)
			}
			seen[id] = true
			if i > 0 && id <= seq[i-1] {
				t.Fatalf("worker %d: id %s after %s, want strictly increasing", w, id, seq[i-1])
			}
		}
	}
}

// TestNewIDSortsInIssueOrder: one caller's ids sort in the order they were
// issued, also when many fall in one millisecond.
func TestNewIDSortsInIssueOrder(t *testing.T) {
	prev := board.NewID()
	for range 10000 {
		id := board.NewID()
		if id <= prev {
			t.Fatalf("id %s after %s, want strictly increasing", id, prev)
		}
		prev = id
	}
}
