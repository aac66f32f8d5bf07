// Package budget reads the day's spend budget from the store: what the day
// has spent, the runs in flight and the estimate they reserve. The decision
// on it is policy's (policy.DayBudget); the dispatcher, explain and status
// read it the same way through this package.
package budget

import (
	"context"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// ReadDay is the day's spend budget as the store has it: the day's
// spend, the open runs and the newest runs for the estimate.
func ReadDay(ctx context.Context, st store.Store, l config.Limits, now time.Time) (policy.DayBudget, error) {
	day := l.DayBoundary.Start(now).UTC()
	spent, err := st.Spend(ctx, day, "")
	if err != nil {
		return policy.DayBudget{}, err
	}
	open, err := st.ListRuns(ctx, store.RunFilter{Open: store.Bool(true)})
	if err != nil {
		return policy.DayBudget{}, err
	}
	// The estimate from recent runs matters only under a day cap; without
	// one, status and ticks read no run history at all.
	var newest []board.Run
	if l.MaxCostPerDayUSD > 0 && l.EstimatedCostPerRunUSD <= 0 {
		if newest, err = st.ListRuns(ctx, store.RunFilter{Newest: true, Limit: policy.RecentRuns + len(open)}); err != nil {
			return policy.DayBudget{}, err
		}
	}
	return policy.NewDayBudget(l.MaxCostPerDayUSD, l.EstimatedCostPerRunUSD, spent, day, open, newest), nil
}
