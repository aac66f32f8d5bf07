// Package policybench plays the incidents drover's failure policy answers,
// on a fake clock, through drover's real dispatcher and policy and through
// small models of the policies its peers document, and counts what each
// spends: runs, dollars, the time until a card shows the truth, and the
// humans it needs (drover bench policy).
//
// Every policy sees the same outcome stream: a scenario says, for a card,
// an attempt's start time and whether the agent's session opens, what the
// attempt ends with. Runs take no time on the fake clock (the agent answers
// at once), so the figures are about the policy's schedule, not the work.
package policybench

import (
	"time"

	"github.com/drover-dev/drover/internal/policy"
)

// Class is what a card's visible state tells an operator.
type Class string

// Classes of visible state.
const (
	// Retrying: the card runs again on a schedule that ignores why it failed.
	Retrying Class = "retrying"
	// Waiting: the card spends nothing until what it waits for changes
	// (the provider, the reset, the account), and says so.
	Waiting Class = "waiting"
	// NeedsHuman: the card stops and says a human must act.
	NeedsHuman Class = "needs_human"
	// Done: the work finished.
	Done Class = "done"
	// Queued: claimable again (released, or not run yet).
	Queued Class = "queued"
)

// Outcome is what one attempt ends with. OK: the agent did the work.
// PreSession: the attempt was refused before any session opened (no agent
// ran, nothing is paid). Otherwise the agent failed with Kind (drover's
// classification of the failure, which the peers' models map to their
// own, coarser rules) and Message; ResetAt is a provider's stated reset.
type Outcome struct {
	OK         bool
	PreSession bool
	Kind       policy.Kind
	Message    string
	// Plain: the failure reaches drover as plain text on stderr for its
	// own classifier (not as a typed classification).
	Plain   bool
	ResetAt time.Duration // offset from the scenario's start; 0: none stated
}

// Scenario is one incident.
type Scenario struct {
	Name  string
	What  string // one line for the table's legend
	Cards int
	// Horizon is how long the scenario is played.
	Horizon time.Duration
	// ClearAt is when the fault clears (an offset; < 0: it does not clear
	// by itself: the card itself must change, a human's fix).
	ClearAt time.Duration
	// OperatorClears: the fault is cleared by an operator (adding credit),
	// so the operator is at the keyboard then and does what the policy's
	// state asks of them at the same time.
	OperatorClears bool
	// Truth is the set of classes that tell the truth about the card
	// during the fault, with the failure kinds whose reason drover must
	// show in them; Done is always true.
	Truth map[Class]bool
	// Reasons are the kinds a truthful drover state names (a block reason,
	// or the kind its agent profile waits on).
	Reasons []policy.Kind
	// Invalid: the card's spec does not fit its agent profile's schema
	// (drover checks before any claim; the peers find out at start).
	Invalid bool
	// Attempt says what an attempt of card (0-based) started at `at`
	// (offset from the start) ends with; n is the card's attempt number
	// over its whole life (1-based).
	Attempt func(card, n int, at time.Duration) Outcome
}

// truthful reports whether a card in class c tells the truth in s.
func (s Scenario) truthful(c Class) bool { return c == Done || s.Truth[c] }

var cardFault = map[Class]bool{NeedsHuman: true}
var waitFault = map[Class]bool{Waiting: true}

// Scenarios are the incidents, in the order the table prints them.
var Scenarios = []Scenario{
	{Name: "invalid_input", What: "a card whose spec lacks its plan: every start is refused before a session (the 230-claim loop)",
		Cards: 1, Horizon: 2 * time.Hour, ClearAt: -1, Truth: cardFault, Reasons: []policy.Kind{policy.KindInvalidInput}, Invalid: true,
		Attempt: func(int, int, time.Duration) Outcome {
			return Outcome{PreSession: true, Kind: policy.KindInvalidInput, Message: "Invalid input: expected object, received undefined"}
		}},
	{Name: "usage_limit", What: "10 cards hit the plan's usage limit at dispatch; the limit resets at 1h30m, as the provider says",
		Cards: 10, Horizon: 3 * time.Hour, ClearAt: 90 * time.Minute, Truth: waitFault, Reasons: []policy.Kind{policy.KindUsageLimited},
		Attempt: func(_ int, _ int, at time.Duration) Outcome {
			if at < 90*time.Minute {
				return Outcome{Kind: policy.KindUsageLimited, Message: "usage limit reached; resets at 10:30 UTC", ResetAt: 90 * time.Minute}
			}
			return Outcome{OK: true}
		}},
	{Name: "deterministic_failure", What: "a card whose tests fail the same way on every attempt",
		Cards: 1, Horizon: 2 * time.Hour, ClearAt: -1, Truth: cardFault, Reasons: []policy.Kind{policy.KindRepeatedFailure, policy.KindAgentFailed},
		Attempt: func(int, int, time.Duration) Outcome {
			return Outcome{Kind: policy.KindAgentFailed, Message: "FAIL TestParse: fixture testdata/orders.json does not load"}
		}},
	{Name: "provider_outage", What: "the provider answers 503 for 30 minutes; 50 cards are ready",
		Cards: 50, Horizon: 2 * time.Hour, ClearAt: 30 * time.Minute, Truth: waitFault, Reasons: []policy.Kind{policy.KindProviderUnavailable},
		Attempt: func(_ int, _ int, at time.Duration) Outcome {
			if at < 30*time.Minute {
				return Outcome{Kind: policy.KindProviderUnavailable, Message: "API error: 503 Service Unavailable"}
			}
			return Outcome{OK: true}
		}},
	{Name: "credits_exhausted", What: "the account's credit runs out before 50 cards; an operator adds credit at 1h",
		Cards: 50, Horizon: 3 * time.Hour, ClearAt: time.Hour, OperatorClears: true,
		Truth: map[Class]bool{Waiting: true, NeedsHuman: true}, Reasons: []policy.Kind{policy.KindQuotaExhausted},
		Attempt: func(_ int, _ int, at time.Duration) Outcome {
			if at < time.Hour {
				return Outcome{Kind: policy.KindQuotaExhausted, Message: "credit balance is too low to access the API"}
			}
			return Outcome{OK: true}
		}},
	{Name: "unknown_account_failure", What: "the account is suspended, in words no classifier knows, for 45 minutes; 40 cards are ready",
		Cards: 40, Horizon: 3 * time.Hour, ClearAt: 45 * time.Minute, Truth: waitFault, Reasons: []policy.Kind{policy.KindUnknown},
		Attempt: func(_ int, _ int, at time.Duration) Outcome {
			if at < 45*time.Minute {
				return Outcome{Kind: policy.KindUnknown, Plain: true, Message: "the workspace of tenant 4821 is frozen pending review"}
			}
			return Outcome{OK: true}
		}},
	{Name: "flaky_card", What: "a card whose first two attempts fail with the same flaky test and whose third succeeds",
		// Nothing needs fixing: a retry is all it takes, so a human asked
		// to act can retry it at once.
		Cards: 1, Horizon: 2 * time.Hour, ClearAt: 0, Truth: map[Class]bool{},
		Attempt: func(_ int, n int, _ time.Duration) Outcome {
			if n < 3 {
				return Outcome{Kind: policy.KindAgentFailed, Message: "FAIL TestUpload: the test server did not answer in time"}
			}
			return Outcome{OK: true}
		}},
}
