package policy

import (
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Verb is what drover does with a card after a run (or a claim) ends.
type Verb string

// Decision verbs. A Decision's Verb is always one of these.
const (
	VerbRelease  Verb = "release"  // the claim is handed back without a start; no penalty (bounded by release_churn_cap)
	VerbRetry    Verb = "retry"    // run again at NextAttemptAt
	VerbDefer    Verb = "defer"    // wait for time or a profile resume; never counted
	VerbBlock    Verb = "block"    // the input must change; BlockReason says what, where, how
	VerbGiveUp   Verb = "give_up"  // a budget ran out; card to failed_state with GaveUp and BlockReason
	VerbPark     Verb = "park"     // waiting for a human answer; not a failure
	VerbComplete Verb = "complete" // the work is done; card to the completed column
	VerbHold     Verb = "hold"     // the card stays where it is (an operator put it there)
)

// ProfileEffect says what a kind does to the card's agent profile.
type ProfileEffect int

// Profile effects.
const (
	ProfileNone          ProfileEffect = iota // the kind concerns this card only
	ProfileBreaker                            // a hit on the profile's circuit breaker (many across cards open it)
	ProfileUntilReset                         // pauses the profile until a known reset time
	ProfileUntilOperator                      // pauses the profile until an operator resumes it
)

// NoCap is the DefaultCap of kinds without a per-card cap of their own:
// counted kinds (bounded by max_attempts) and kinds that never retry.
const NoCap = -1

// KindSpec is the built-in policy of one failure kind, from the kind table in docs/design.md.
// Config.Kinds overrides Cap and the schedule; everything else is fixed.
type KindSpec struct {
	Kind Kind
	// Verb is the decision while the card's budgets last.
	Verb Verb
	// Outcome is the run outcome recorded for this kind.
	Outcome board.Outcome
	// Counts reports whether the kind spends policy.max_attempts.
	Counts bool
	// DefaultCap is the per-card number of retries (or deferrals) of this kind
	// allowed in one retry epoch; the next one gives up. NoCap when none.
	DefaultCap int
	// DefaultTiers are fixed delays (the last repeats); nil means the
	// exponential policy.backoff. Only meaningful when Reschedules.
	DefaultTiers []time.Duration
	// Reschedules reports whether the card is run again automatically.
	Reschedules bool
	// Profile is the kind's effect on the agent profile.
	Profile ProfileEffect
	// WhatCanChange is the recovery condition, for explain and policy show.
	WhatCanChange string
}

// Label is the verb as `drover policy show` prints it.
func (s KindSpec) Label() string {
	switch s.Profile {
	case ProfileUntilOperator:
		return "pause_profile_and_defer"
	case ProfileUntilReset:
		return "pause_profile_and_defer_until_reset"
	}
	return string(s.Verb)
}

// ProfileLevel reports whether the kind is about the agent profile rather
// than the card: it feeds the profile's breaker or pauses the profile.
func (s KindSpec) ProfileLevel() bool { return s.Profile != ProfileNone }

var specs = map[Kind]KindSpec{
	KindRateLimited: {Verb: VerbDefer, Outcome: board.OutcomeDeferred, DefaultCap: 5, Reschedules: true, Profile: ProfileBreaker,
		WhatCanChange: "time: the provider's retry-after or reset time"},
	KindUsageLimited: {Verb: VerbDefer, Outcome: board.OutcomeDeferred, DefaultCap: NoCap, Reschedules: true, Profile: ProfileUntilReset,
		WhatCanChange: "time: the plan's usage window resets"},
	KindQuotaExhausted: {Verb: VerbDefer, Outcome: board.OutcomeDeferred, DefaultCap: NoCap, Profile: ProfileUntilOperator,
		WhatCanChange: "a human adds credit: a probe at growing waits finds it (policy.quota_probe), or drover agent resume PROFILE"},
	KindProviderUnavailable: {Verb: VerbRetry, Outcome: board.OutcomeFailed, DefaultCap: 10, Reschedules: true, Profile: ProfileBreaker,
		WhatCanChange: "time: the provider recovers"},
	KindNetwork: {Verb: VerbRetry, Outcome: board.OutcomeFailed, DefaultCap: 3, Reschedules: true,
		DefaultTiers:  []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute},
		WhatCanChange: "time: the network comes back"},
	KindWorkspaceSetup: {Verb: VerbRetry, Outcome: board.OutcomeFailed, DefaultCap: 3, Reschedules: true,
		WhatCanChange: "infrastructure or the workspace hooks in WORKFLOW.md"},
	KindInterrupted: {Verb: VerbRetry, Outcome: board.OutcomeInterrupted, DefaultCap: 3, Reschedules: true,
		DefaultTiers:  []time.Duration{0},
		WhatCanChange: "the dispatcher restarts (crash-loop guard)"},
	KindAuthFailed: {Verb: VerbDefer, Outcome: board.OutcomeDeferred, DefaultCap: NoCap, Profile: ProfileUntilOperator,
		WhatCanChange: "credentials change, then drover agent resume PROFILE"},
	KindConfigError: {Verb: VerbDefer, Outcome: board.OutcomeDeferred, DefaultCap: NoCap, Profile: ProfileUntilOperator,
		WhatCanChange: "the agent profile's config changes, then drover agent resume PROFILE"},
	KindInvalidInput: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "the card's spec or fields change"},
	KindContextExhausted: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "the card changes (a smaller task or prompt)"},
	KindPermissionDenied: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "the card or the agent's permissions change"},
	KindRefused: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "the card changes"},
	KindAgentBlocked: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "a human acts on the agent's own what/where/how, then drover card resume ID"},
	KindInputRequired: {Verb: VerbPark, Outcome: board.OutcomeParked, DefaultCap: NoCap,
		WhatCanChange: "a human answers (drover card answer ID TEXT)"},
	KindAgentFailed: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "maybe: another attempt"},
	KindMaxTurns: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "maybe: another attempt"},
	KindTimeout: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "maybe: another attempt"},
	KindStalled: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "maybe: another attempt"},
	KindVerifyFailed: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "the next attempt fixes what the checks found (their output is in its prompt)"},
	KindUnknown: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "maybe: another attempt (the raw error text is kept)"},
	KindNoProgress: {Verb: VerbBlock, Outcome: board.OutcomeSucceeded, DefaultCap: NoCap,
		WhatCanChange: "a human looks at why the card stays eligible after clean exits"},
	KindRepeatedFailure: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "the card, a comment or answer, or the agent profile's config changes, then drover card resume ID"},
	KindCancelled: {Verb: VerbHold, Outcome: board.OutcomeCancelled, DefaultCap: NoCap,
		WhatCanChange: "an operator resumes or cancels the card (never retried automatically)"},
	KindSpendLimit: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "an operator raises limits.max_cost_per_card_usd or makes the card smaller, then drover card resume ID"},
	KindNoChange: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: 2, Reschedules: true,
		WhatCanChange: "the next attempt changes the branch (its prompt says the last one did not), or the card says spec.change_required: false"},
	KindPushRejected: {Verb: VerbBlock, Outcome: board.OutcomeBlocked, DefaultCap: NoCap,
		WhatCanChange: "a human merges or rebases the card's branch (or deletes the remote branch), then drover card resume ID"},
	KindCheckFailed: {Verb: VerbRetry, Outcome: board.OutcomeFailed, Counts: true, DefaultCap: NoCap, Reschedules: true,
		WhatCanChange: "the next attempt fixes what the failing check of the pull request found (its name, summary and link are in its prompt)"},
	KindSucceeded: {Verb: VerbComplete, Outcome: board.OutcomeSucceeded, DefaultCap: NoCap,
		WhatCanChange: "nothing: the work is done"},
}

// Spec returns the built-in policy of k. An unrecognised kind (including "")
// gets unknown's policy, with Kind kept as given: a confident wrong verb is
// worse than a counted, retried unknown.
func Spec(k Kind) KindSpec {
	s, ok := specs[k]
	if !ok {
		s = specs[KindUnknown]
	}
	s.Kind = k
	if s.DefaultTiers != nil {
		s.DefaultTiers = append([]time.Duration(nil), s.DefaultTiers...)
	}
	return s
}

// known reports whether k has its own row in the spec table.
func known(k Kind) bool { _, ok := specs[k]; return ok }
