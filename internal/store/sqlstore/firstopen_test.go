package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// TestFirstOpenRace: several drovers (here goroutines, each with its own
// connection, flock and WAL switch, as processes have) open one SQLite file
// that does not exist yet and each adds a card. Every open and every add
// succeeds: the first open's WAL switch and migrations are one process's at
// a time, the others wait.
func TestFirstOpenRace(t *testing.T) {
	const rounds, racers = 60, 24
	for r := 0; r < rounds; r++ {
		path := filepath.Join(t.TempDir(), "new", "drover.db")
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				st, err := sqlstore.Open(ctx, "sqlite:"+path)
				if err != nil {
					errs <- fmt.Errorf("open: %w", err)
					return
				}
				defer st.Close()
				c := board.Card{ID: board.NewID(), Title: fmt.Sprintf("racer %d", i), State: "ready"}
				if _, err := st.CreateCard(ctx, "DRV", c, "test"); err != nil {
					errs <- fmt.Errorf("add: %w", err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", r, err)
		}
		if t.Failed() {
			return
		}
	}
}
