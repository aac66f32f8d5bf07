package policy

import "time"

// Defaults returns the built-in failure policy: every value used for a key
// WORKFLOW.md's policy: section leaves out. It is the one owner of these
// defaults; the config package starts from it.
func Defaults() Config {
	return Config{
		MaxAttempts:     10,
		FailedState:     "blocked",
		Backoff:         Backoff{Base: 10 * time.Second, Max: 5 * time.Minute, Jitter: 0.1},
		ReleaseChurnCap: 5,
		ContinuationCap: 3,
		Kinds: map[Kind]KindPolicy{
			KindNetwork:             {Cap: capOf(3), Tiers: []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}},
			KindWorkspaceSetup:      {Cap: capOf(3)},
			KindInterrupted:         {Cap: capOf(3), Tiers: []time.Duration{0}},
			KindProviderUnavailable: {Cap: capOf(10)},
			KindRateLimited:         {Cap: capOf(5)},
		},
		BreakerThreshold: 5,
		BreakerWindow:    5 * time.Minute,
		BreakerCooldown:  time.Minute,

		CorrelationCards:  3,
		CorrelationWindow: 10 * time.Minute,
		RepeatCap:         3,
		QuotaProbe:        30 * time.Minute,
	}
}

func capOf(n int) *int { return &n }

// Cap is the effective per-card cap of k under cfg: the number of retries (or
// deferrals) of that kind allowed in one retry epoch. NoCap when unbounded by a
// cap of its own (most counted kinds are bounded by max_attempts alone;
// no_changes is counted and capped both).
func (c Config) Cap(k Kind) int {
	s := Spec(k)
	if s.Counts && s.DefaultCap == NoCap || !s.Reschedules {
		return NoCap
	}
	if kp, ok := c.Kinds[k]; ok && kp.Cap != nil {
		if *kp.Cap < 0 {
			return NoCap
		}
		return *kp.Cap
	}
	return s.DefaultCap
}
