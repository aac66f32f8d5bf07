package policy

import "time"

// Config is the failure policy as WORKFLOW.md's policy: key states it. The
// config package fills it (its yaml tags are the keys it decodes as they are;
// kinds, breaker.* and correlation.* it reads itself); Defaults gives the
// values used for every key the file leaves out.
type Config struct {
	MaxAttempts     int                 `json:"max_attempts" yaml:"max_attempts"` // negative = unbounded; 0 is refused
	FailedState     string              `json:"failed_state" yaml:"failed_state"` // default "blocked"
	Backoff         Backoff             `json:"backoff" yaml:"backoff"`
	ReleaseChurnCap int                 `json:"release_churn_cap" yaml:"release_churn_cap"`
	ContinuationCap int                 `json:"continuation_cap" yaml:"continuation_cap"`
	Kinds           map[Kind]KindPolicy `json:"kinds" yaml:"-"`
	// Breaker: this many profile-level failures (rate_limited, usage_limited,
	// provider_unavailable) across cards within Window open the profile's breaker.
	BreakerThreshold int           `json:"breaker_threshold" yaml:"-"`
	BreakerWindow    time.Duration `json:"breaker_window" yaml:"-"`
	BreakerCooldown  time.Duration `json:"breaker_cooldown" yaml:"-"` // open time when no reset time is known
	// Correlation: one failure fingerprint of a counted kind (unknown
	// included) ending runs on CorrelationCards distinct cards of one
	// profile within CorrelationWindow is the profile's problem, not the
	// cards': the breaker opens and those runs are not counted. Negative
	// CorrelationCards turns it off.
	CorrelationCards  int           `json:"correlation_cards" yaml:"-"`
	CorrelationWindow time.Duration `json:"correlation_window" yaml:"-"`
	// RepeatCap: this many identical failure fingerprints in a row on one
	// card, with nothing changed between the attempts, block the card.
	// Negative turns it off.
	RepeatCap int `json:"repeat_cap" yaml:"repeat_cap"`
	// QuotaProbe: a profile whose account ran out of credit
	// (quota_exhausted) is held, not paused for good: after QuotaProbe one
	// probe card runs, and while probes keep finding the credit gone the
	// wait doubles up to MaxQuotaProbe. Credit added in a billing console
	// is found without an operator. 0 pauses until drover agent resume.
	QuotaProbe time.Duration `json:"quota_probe" yaml:"quota_probe"`
}

// Backoff is an exponential schedule with jitter: Base × 2^(n-1), at most Max.
type Backoff struct {
	Base   time.Duration `json:"base" yaml:"base"`
	Max    time.Duration `json:"max" yaml:"max"`
	Jitter float64       `json:"jitter" yaml:"jitter"` // 0..1, fraction of the delay taken off at random
}

// KindPolicy overrides the defaults for one kind. Zero fields keep the default.
type KindPolicy struct {
	Cap     *int            `json:"cap,omitempty"`     // per-card cap for this kind (per retry epoch)
	Tiers   []time.Duration `json:"tiers,omitempty"`   // fixed delays; the last repeats
	Backoff *Backoff        `json:"backoff,omitempty"` // exponential instead of tiers
}
