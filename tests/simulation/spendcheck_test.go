package simulation

import (
	"context"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/budget"
)

// The simulated day cap: priced sessions cost $0.10 (a quarter of them) and
// limits.estimated_cost_per_run_usd is $0.10, so every run costs at most its
// estimate and, with one process at a time, the bound docs/guides/spend-caps.md gives for
// limits.max_cost_per_day_usd is the cap itself (issue 13, item 13).
const (
	dayCapUSD   = 0.35
	estimateUSD = 0.1
	spendSlack  = 1e-9
)

// checkDaySpend: the spend day in progress never passes the cap. At the end,
// every spend day of the run table is held to it too.
func (c *checker) checkDaySpend(final bool, runs []board.Run) {
	w := c.w
	l := w.cfg.Limits
	now := w.clk.Now()
	spent, err := w.raw.Spend(context.Background(), l.DayBoundary.Start(now), "")
	if err != nil {
		w.violate("checker: %v", err)
		return
	}
	if spent > l.MaxCostPerDayUSD+spendSlack {
		w.violate("the spend day from %s spent $%.2f, over limits.max_cost_per_day_usd $%.2f", fmtTime(l.DayBoundary.Start(now)), spent, l.MaxCostPerDayUSD)
	}
	if !final {
		return
	}
	byDay := map[time.Time]float64{}
	for _, r := range runs {
		byDay[l.DayBoundary.Start(r.ClaimedAt)] += r.CostUSD
	}
	for day, usd := range byDay {
		if usd > l.MaxCostPerDayUSD+spendSlack {
			w.violate("the spend day from %s spent $%.2f, over limits.max_cost_per_day_usd $%.2f", fmtTime(day), usd, l.MaxCostPerDayUSD)
		}
	}
}

// spendWaits says why an eligible card may rightly wait for the next spend
// day ("" = it may not).
func (c *checker) spendWaits() string {
	w := c.w
	b, err := budget.ReadDay(context.Background(), w.raw, w.cfg.Limits, w.clk.Now())
	if err != nil {
		return ""
	}
	return b.Paused(w.cfg.Limits.DayBoundary.Next(w.clk.Now()))
}
