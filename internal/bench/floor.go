package bench

import (
	"context"
	"fmt"

	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// FloorResult is one floor measurement (sqlstore.Floor) on a scratch store.
type FloorResult struct {
	Backend   string  `json:"backend"`
	Cards     int     `json:"cards"`
	Batch     int     `json:"batch"`
	Workers   int     `json:"workers"`
	WallMS    float64 `json:"wall_ms"`
	CardsPerS float64 `json:"cards_per_s"`
}

// MeasureFloor runs sqlstore.Floor for cards cards, batch in flight, on a
// scratch store: storeDSN "" for a SQLite file in a temp directory under
// dir, or a store DSN whose backend and place the scratch store takes (see
// Scratch).
func MeasureFloor(ctx context.Context, dir, storeDSN string, cards, batch int) (FloorResult, error) {
	res := FloorResult{Backend: "sqlite", Cards: cards, Batch: batch}
	_, dsn, cleanup, err := scratchStore(ctx, dir, storeDSN)
	if err != nil {
		return res, err
	}
	defer cleanup()
	st, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return res, err
	}
	defer st.Close()
	res.Backend = st.Backend()
	fs, err := st.Floor(ctx, sqlstore.FloorOptions{Cards: cards, Batch: batch})
	if err != nil {
		return res, fmt.Errorf("floor on %s: %w", res.Backend, err)
	}
	res.Workers = fs.Workers
	res.WallMS = msOf(fs.Wall)
	res.CardsPerS = float64(cards) / fs.Wall.Seconds()
	return res, nil
}
