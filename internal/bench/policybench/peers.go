package policybench

import (
	"time"

	"github.com/drover-dev/drover/internal/policy"
)

// Peer is a model of a policy a peer documents: a pure function from a
// failed attempt to what the card does next. It is a model, built from the
// document it cites, not the peer's code.
type Peer struct {
	Name  string
	Model string // what the model does, in one line
	Cites string // the public document it follows
	// Plays reports whether the document says what the peer does in s
	// (nil: every scenario).
	Plays func(Scenario) bool
	// Next: the attempt the card started at `at`, its n-th since a human
	// last acted on it (1-based), failed with o. Stop: no attempt follows
	// until a human acts; else the next starts at At.
	Next func(o Outcome, n int, at time.Duration) Step
}

// Step is a peer's decision after a failed attempt.
type Step struct {
	Class Class
	At    time.Duration
	Stop  bool
}

// symphonyDelay is Symphony's failure retry delay before retry n (n ≥ 1):
// min(10 s × 2^(n−1), 5 min).
func symphonyDelay(n int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// ladder retries on Symphony's delays; after cap failures (cap < 0: never)
// the card stops in a state that says a human must act.
func ladder(cap int) func(Outcome, int, time.Duration) Step {
	return func(_ Outcome, n int, at time.Duration) Step {
		if cap >= 0 && n >= cap {
			return Step{Class: NeedsHuman, Stop: true}
		}
		return Step{Class: Retrying, At: at + symphonyDelay(n)}
	}
}

// ledgerKinds are the ledger policy's capped transient kinds, with the
// drover kinds that map to them; every other failure is permanent there.
var ledgerKinds = map[policy.Kind]int{
	policy.KindRateLimited: 5, policy.KindUsageLimited: 5,
	policy.KindTimeout: 3, policy.KindStalled: 3,
	policy.KindNetwork: 3, policy.KindProviderUnavailable: 3,
}

// ledgerTiers are the ledger's backoff tiers: the document states the last
// (up to 15 min); the first two are this model's assumption.
var ledgerTiers = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}

func ledger(o Outcome, n int, at time.Duration) Step {
	cap, transient := ledgerKinds[o.Kind]
	if !transient || n > cap {
		// permanent (or cap + 1): the claim stays, outcome=needs_human, a note to Slack
		return Step{Class: NeedsHuman, Stop: true}
	}
	next := at + ledgerTiers[min(n, len(ledgerTiers))-1]
	if o.ResetAt > next {
		// next_retry_at honours the provider's stated reset: the card waits for it
		return Step{Class: Waiting, At: o.ResetAt}
	}
	return Step{Class: Retrying, At: next}
}

// releasePoll is how often the release loop's worker claims again; the
// incident's 230 claims in two hours are one every 31 s.
const releasePoll = 30 * time.Second

// Peers are the modelled policies, in the order the table prints them.
var Peers = []Peer{
	{Name: "symphony-v1", Model: "every failure retried on min(10s·2^(n−1), 5m), no attempt cap, no classification",
		Cites: "openai/symphony SPEC.md (failure retry delay, agent.max_retry_backoff_ms; v1 has no attempt cap)", Next: ladder(-1)},
	{Name: "symphony-cap10", Model: "the same ladder, at most 10 failure retries, then the card stops for a human",
		Cites: "openai/symphony's later spec; hojinzs/github-symphony agent.max_failure_retries (issue #136, PR #139)", Next: ladder(11)},
	{Name: "iterion-adr015", Model: "the same ladder (the ADR states its 5m cap; its 10s base is this model's assumption), agent.max_attempts 10 (initial run + retries), then the terminal blocked column",
		Cites: "Iterion dispatcher ADR-015 (attempt cap, agent.failed_state: blocked)", Next: ladder(10)},
	{Name: "ledger", Model: "caps rate_limit 5, timeout 3, network 3 (cap + 1 escalates), tiers 1m/5m/15m honouring a stated reset; any other kind permanent: needs_human",
		Cites: "the mainark ledger failure policy (per-kind caps, needs_human, dispatch <ID> --retry)", Next: ledger},
	{Name: "release-loop", Model: "a start refused before any session releases the claim; the unchanged card is claimed again at the next poll (30s)",
		Cites: "AgentPod PR #858 (the incident before the fix: 230 claims in two hours)",
		Plays: func(s Scenario) bool { return s.Invalid },
		Next: func(_ Outcome, _ int, at time.Duration) Step {
			return Step{Class: Queued, At: at + releasePoll}
		}},
}
