package policy

import (
	"fmt"

	"github.com/drover-dev/drover/internal/board"
)

// SpendLimits are limits.max_cost_per_day_usd and limits.max_cost_per_card_usd;
// 0 (or less) turns a limit off.
type SpendLimits struct {
	PerDay  float64 `json:"max_cost_per_day_usd"`
	PerCard float64 `json:"max_cost_per_card_usd"`
}

// SpendDecision checks spend against the limits. spentToday is the cost of
// runs finished since the day boundary, inFlightToday the cost reported so far
// by runs still going (they count, so parallel runs cannot overshoot unseen),
// cardSpent the card's cost in its current retry epoch including its run in
// flight. pauseDispatch: start nothing new today (cards are untouched).
// blockCard: block this card (and stop its run if one is going). reason names
// the key and the numbers; it is empty when neither applies.
func SpendDecision(limits SpendLimits, spentToday, inFlightToday, cardSpent float64) (pauseDispatch bool, blockCard bool, reason string) {
	var why []string
	if limits.PerDay > 0 && spentToday+inFlightToday >= limits.PerDay {
		pauseDispatch = true
		why = append(why, fmt.Sprintf("limits.max_cost_per_day_usd: $%.2f spent today ($%.2f finished + $%.2f in flight) of $%.2f; new dispatch paused until the day boundary",
			spentToday+inFlightToday, spentToday, inFlightToday, limits.PerDay))
	}
	if limits.PerCard > 0 && cardSpent >= limits.PerCard {
		blockCard = true
		why = append(why, fmt.Sprintf("limits.max_cost_per_card_usd: the card has spent $%.2f of $%.2f", cardSpent, limits.PerCard))
	}
	for i, w := range why {
		if i > 0 {
			reason += "; "
		}
		reason += w
	}
	return pauseDispatch, blockCard, reason
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
