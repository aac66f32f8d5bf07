package dispatch

import (
	"context"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
)

// cardSpend is what a card's runs of its current retry epoch cost, in-flight
// runs included (resume opens a new epoch, and with it a fresh spend budget).
func cardSpend(ctx context.Context, st store.Store, c board.Card) (float64, error) {
	epoch := c.RetryEpoch
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: c.ID, RetryEpoch: &epoch})
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, r := range runs {
		sum += r.CostUSD
	}
	return sum, nil
}

// overCardCap blocks a card that already spent its limit, before it is
// claimed again, and reports whether it did.
func (d *Dispatcher) overCardCap(ctx context.Context, cfg *config.Config, c board.Card) bool {
	limit := cfg.Limits.MaxCostPerCardUSD
	if limit <= 0 {
		return false
	}
	spent, err := cardSpend(ctx, d.o.Store, c)
	if err != nil || spent < limit {
		return false
	}
	d.routes.blockSpent(ctx, cfg, c, spent)
	return true
}

func dayKey(t time.Time) string { return t.UTC().Format("2006-01-02T15:04") }
