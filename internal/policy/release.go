package policy

import (
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// ReleaseInput describes a claim handed back before the agent started
// (capacity, lease, another node, a paused profile).
type ReleaseInput struct {
	Config   Config
	Card     board.Card
	CardRole board.Role // the card's column role now; a sink means hold
	// History is every run of the current retry epoch ordered by attempt, this
	// released claim's run last (its Outcome not yet set).
	History []board.Run
	Reason  string        // why the claim was released, in words
	After   time.Duration // earliest re-claim, 0 for at once
	Now     time.Time
	// Column names: where the card waits, and where a churn block goes.
	EligibleState, BlockedState string
	AgentProfile                string
}

// ReleaseChurnKind is the BlockReason.Kind of a block for release churn. It is
// a reason code, not a failure kind: no run failed.
const ReleaseChurnKind = "release_churn"

// DecideRelease routes a released claim. A release costs nothing, but
// release_churn_cap releases in a row without a start block the card with the
// last release reason: the card can never be claimed and handed back forever.
func DecideRelease(in ReleaseInput) Decision {
	id := ident(in.Card)
	var cur board.Run
	prior := in.History
	if n := len(in.History); n > 0 {
		cur, prior = in.History[n-1], in.History[:n-1]
	}
	reason := nonEmpty(in.Reason, "no reason given")
	d := Decision{Outcome: board.OutcomeReleased}
	if in.CardRole.IsSink() {
		d.Verb, d.NextState, d.Event = VerbHold, in.Card.State, board.EvReleased
		d.Explain = fmt.Sprintf("claim released (%s); %s stays in %s, a sink", reason, id, in.Card.State)
		return d
	}
	limit := max(in.Config.ReleaseChurnCap, 1)
	n := trailing(prior, board.OutcomeReleased) + 1
	if n >= limit {
		d.Verb, d.Event = VerbBlock, board.EvBlocked
		d.NextState = nonEmpty(in.BlockedState, in.Config.FailedState, "blocked")
		d.BlockReason = &board.BlockReason{
			Kind:  ReleaseChurnKind,
			What:  fmt.Sprintf("claimed and released %d times in a row without starting (policy.release_churn_cap %d); last reason: %s", n, limit, reason),
			Where: where(in.Card, cur, "", ""),
			How:   fmt.Sprintf("remove the cause of the release (%s), then drover card resume %s", reason, id),
		}
		d.Notify = []string{NotifyBlocked}
		d.Explain = fmt.Sprintf("claim released %d of %d times in a row without a start (%s); moved to %s", n, limit, reason, d.NextState)
		return d
	}
	d.Verb, d.Event = VerbRelease, board.EvReleased
	d.NextState = nonEmpty(in.EligibleState, "ready")
	if in.After > 0 {
		at := in.Now.Add(in.After)
		d.NextAttemptAt = &at
		d.Explain = fmt.Sprintf("claim released without a start (%s; %d of %d in a row); claimable again at %s", reason, n, limit, clock(at, in.Now))
	} else {
		d.Explain = fmt.Sprintf("claim released without a start (%s; %d of %d in a row); claimable again now", reason, n, limit)
	}
	return d
}
