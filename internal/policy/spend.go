package policy

import (
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// SpendLimits are limits.max_cost_per_day_usd and limits.max_cost_per_card_usd;
// 0 (or less) turns a limit off.
type SpendLimits struct {
	PerDay  float64 `json:"max_cost_per_day_usd"`
	PerCard float64 `json:"max_cost_per_card_usd"`
}

// RecentRuns is how many of the newest finished runs DayBudget averages for its
// estimate of what a run costs.
const RecentRuns = 20

// DayBudget is the day's spend against limits.max_cost_per_day_usd, with
// the runs still going reserved at an estimate: their cost is usually known
// only when they end.
type DayBudget struct {
	CapUSD   float64 `json:"day_cap_usd"`
	SpentUSD float64 `json:"today_usd"` // runs claimed since the day boundary, live figures of open runs included
	// ReservedUSD is what the day's open runs are expected to cost on top of
	// what they reported so far: per open run, EstimateUSD minus its live
	// cost (never below 0).
	ReservedUSD float64 `json:"reserved_usd"`
	// EstimateUSD is what one run is expected to cost:
	// limits.estimated_cost_per_run_usd, else the average of the newest
	// finished runs that reported a cost (0 when the newest finished runs
	// reported none); unknown before any run finished, and then runs start
	// one at a time.
	EstimateUSD float64   `json:"estimate_usd"`
	EstimateOf  string    `json:"estimate_source"` // "config", "recent_runs" or "unknown"
	Running     int       `json:"running_today"`   // the day's open runs
	DayStart    time.Time `json:"day_start"`
}

// NewDayBudget reads the day's budget from spent (the store's spend since
// dayStart), the open runs and the newest runs (at least RecentRuns, newest
// first). configured is limits.estimated_cost_per_run_usd.
func NewDayBudget(capUSD, configured, spent float64, dayStart time.Time, open, newest []board.Run) DayBudget {
	b := DayBudget{CapUSD: capUSD, SpentUSD: spent, DayStart: dayStart, EstimateOf: "unknown"}
	sum, n, finished := 0.0, 0, 0
	for _, r := range newest {
		if r.Open() || finished == RecentRuns {
			continue
		}
		finished++
		if r.CostUSD > 0 {
			sum += r.CostUSD
			n++
		}
	}
	switch {
	case configured > 0:
		b.EstimateUSD, b.EstimateOf = configured, "config"
	case n > 0:
		b.EstimateUSD, b.EstimateOf = sum/float64(n), "recent_runs"
	case finished > 0:
		// runs finish without reporting a cost (a command agent): they
		// reserve nothing, as they spend nothing the cap could see
		b.EstimateOf = "recent_runs"
	}
	for _, r := range open {
		if !r.Open() || r.ClaimedAt.Before(dayStart) {
			continue // a run claimed before the boundary spends yesterday's budget
		}
		b.Running++
		b.ReservedUSD += max(0, b.EstimateUSD-r.CostUSD)
	}
	return b
}

// Reserve counts one more run in flight, claimed on this budget.
func (b *DayBudget) Reserve() {
	b.Running++
	b.ReservedUSD += b.EstimateUSD
}

// spendSlack absorbs float sums: $0.10 + $0.10 + $0.05 is $0.25.
const spendSlack = 1e-9

// Paused says why no new run may start today ("" = one may): the day cap is
// reached, or one more run at its estimate would pass it (unless it would be
// the day's first), or the estimate is unknown and a run is already going.
// next is the next day boundary.
func (b DayBudget) Paused(next time.Time) string {
	why, _ := b.paused(next)
	return why
}

// Capped says the day is done: dispatch is paused until the next day
// boundary (not merely one run at a time for want of an estimate).
func (b DayBudget) Capped() bool {
	_, capped := b.paused(time.Time{})
	return capped
}

func (b DayBudget) paused(next time.Time) (why string, capped bool) {
	if b.CapUSD <= 0 {
		return "", false
	}
	at := fmt.Sprintf("cards wait, neither blocked nor counted, for the next spend day at %s (limits.day_boundary) or a higher limits.max_cost_per_day_usd",
		next.UTC().Format("2006-01-02 15:04 UTC"))
	head := fmt.Sprintf("limits.max_cost_per_day_usd: $%.2f spent today + $%.2f reserved for %d run(s) in flight of $%.2f",
		b.SpentUSD, b.ReservedUSD, b.Running, b.CapUSD)
	switch {
	case b.SpentUSD+b.ReservedUSD >= b.CapUSD-spendSlack:
		return head + "; " + at, true
	case b.EstimateOf == "unknown" && b.Running > 0:
		return head + "; what a run costs is not known yet (no finished run reported a cost; set limits.estimated_cost_per_run_usd), so runs start one at a time: the next waits for this one to finish", false
	case b.SpentUSD+b.ReservedUSD+b.EstimateUSD > b.CapUSD+spendSlack && (b.Running > 0 || b.SpentUSD > spendSlack):
		// (the day's first run always may: a cap below one run's cost
		// still lets one run a day rather than none ever)
		return head + fmt.Sprintf("; one more run (estimated $%.2f, %s) would pass the cap; ", b.EstimateUSD, b.EstimateOf) + at, true
	}
	return "", false
}

// SpendBlock is the block for a card over its spend limit: the decision the
// dispatcher writes when SpendDecision says blockCard. runID may be empty;
// when it is set, the run it names ends blocked with kind spend_limit.
func SpendBlock(card board.Card, limits SpendLimits, cardSpent float64, runID, blockedState string) Decision {
	id := ident(card)
	w := "card " + id
	if runID != "" {
		w += ", run " + runID
	}
	st := nonEmpty(blockedState, "blocked")
	return Decision{
		Verb: VerbBlock, NextState: st, Event: board.EvBlocked, Notify: []string{NotifyBlocked},
		Kind: KindSpendLimit, Outcome: board.OutcomeBlocked,
		BlockReason: &board.BlockReason{
			Kind:  string(KindSpendLimit),
			What:  fmt.Sprintf("spend limit: the card has spent $%.2f of limits.max_cost_per_card_usd $%.2f", cardSpent, limits.PerCard),
			Where: w,
			How:   how(KindSpendLimit, id, "", ""),
		},
		Explain: fmt.Sprintf("%s spent $%.2f of its $%.2f limit; moved to %s", id, cardSpent, limits.PerCard, st),
	}
}
