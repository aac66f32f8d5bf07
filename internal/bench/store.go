package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// StoreStats is one run of the store scenario.
type StoreStats struct {
	Backend string `json:"backend"`
	Cards   int    `json:"cards"`
	// CreateOpsPerS is CreateCard calls per second, one after another.
	CreateOpsPerS float64 `json:"create_ops_per_s"`
	// ListOpsPerS lists one page (ListLimit) of ListState in board order.
	ListState   string  `json:"list_state"`
	ListLimit   int     `json:"list_limit"`
	ListOpsPerS float64 `json:"list_ops_per_s"`
	// FullScanOpsPerS is the same list with the indexes forbidden.
	FullScanOpsPerS float64 `json:"list_full_scan_ops_per_s"`
	// IndexSpeedup is ListOpsPerS / FullScanOpsPerS.
	IndexSpeedup float64 `json:"index_speedup"`
}

// stateOf spreads the created cards over the board: a fifth ready.
func stateOf(i int) string {
	return [...]string{"done", "done", "ready", "backlog", "done"}[i%5]
}

// MeasureStore creates cards cards with CreateCard on s, one after another,
// then lists one page of ready cards repeatedly with and without the
// indexes. s should be a scratch store (see Scratch): the cards stay.
func MeasureStore(ctx context.Context, s *sqlstore.DB, cards int) (StoreStats, error) {
	st := StoreStats{Backend: s.Backend(), Cards: cards, ListState: "ready", ListLimit: 100}
	if cards <= 0 {
		return st, fmt.Errorf("bench: cards must be positive (got %d)", cards)
	}
	start := time.Now()
	for i := 0; i < cards; i++ {
		c := board.Card{Title: fmt.Sprintf("bench card %d", i), State: stateOf(i), Priority: i % 5}
		if _, err := s.CreateCard(ctx, "BEN", c, "bench"); err != nil {
			return st, err
		}
	}
	st.CreateOpsPerS = float64(cards) / time.Since(start).Seconds()
	f := store.CardFilter{States: []string{st.ListState}, Limit: st.ListLimit}
	rate := func(list func(context.Context, store.CardFilter) ([]board.Card, error)) (float64, error) {
		if _, err := list(ctx, f); err != nil { // warm up
			return 0, err
		}
		// At least 5 lists and at least 250ms of them.
		n := 0
		start := time.Now()
		for n < 5 || time.Since(start) < 250*time.Millisecond {
			if _, err := list(ctx, f); err != nil {
				return 0, err
			}
			n++
		}
		return float64(n) / time.Since(start).Seconds(), nil
	}
	var err error
	if st.ListOpsPerS, err = rate(s.ListCards); err != nil {
		return st, err
	}
	if st.FullScanOpsPerS, err = rate(s.ListCardsUnindexed); err != nil {
		return st, err
	}
	st.IndexSpeedup = st.ListOpsPerS / st.FullScanOpsPerS
	return st, nil
}

// Scratch returns the DSN of an empty scratch store on the same backend and
// place as dsn, and a function that removes it: for SQLite a new file in the
// same directory, for PostgreSQL a new schema in the same database. The
// benchmark's cards never touch the board that dsn names.
func Scratch(ctx context.Context, dsn string) (string, func(), error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		dir := filepath.Dir(strings.TrimPrefix(dsn, "sqlite:"))
		_, statErr := os.Stat(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		d, cleanup, err := tempDir(dir)
		if err != nil {
			return "", nil, err
		}
		return "sqlite:" + filepath.Join(d, "bench.db"), func() {
			cleanup()
			if statErr != nil {
				os.Remove(dir) // it did not exist before (only removed when empty)
			}
		}, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return "", nil, err
		}
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		defer conn.Close(ctx)
		schema := fmt.Sprintf("drover_bench_%d", rand.Int64N(1<<62))
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return "", nil, err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), func() {
			c, err := pgx.Connect(context.Background(), dsn)
			if err == nil {
				c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
				c.Close(context.Background())
			}
		}, nil
	}
	return "", nil, fmt.Errorf("bench: %q is not a store DSN", dsn)
}
