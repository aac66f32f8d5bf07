package policy

import (
	"fmt"
	"sort"
	"strings"
)

// ValidationError lists every problem found in a policy, each naming its key.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "; ") }

// Validate checks the policy against the board. columnRole returns the role of a
// column by name (ok false when there is no such column); it may be nil, in which
// case state names are not checked. Every message names the key at fault and the
// fix. A policy that fails here must stop start-up: there is no run-time fallback.
func (c Config) Validate(columnRole func(state string) (role string, ok bool)) error {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }

	if c.MaxAttempts == 0 {
		add("policy.max_attempts: 0 is not allowed; set a positive number of attempts (default 10) or a negative value for unbounded")
	}
	switch {
	case c.FailedState == "":
		add("policy.failed_state: empty; name a sink column with role blocked or cancelled (default blocked)")
	case columnRole != nil:
		role, ok := columnRole(c.FailedState)
		switch {
		case !ok:
			add("policy.failed_state: no column named %q on the board; add {name: %s, role: blocked} to board.columns or name an existing blocked column", c.FailedState, c.FailedState)
		case role != "blocked" && role != "cancelled":
			add("policy.failed_state: column %q has role %s; it must be a sink (role blocked or cancelled) so automation never reads a given-up card as ready", c.FailedState, role)
		}
	}
	checkBackoff("policy.backoff", c.Backoff, add)
	if c.ReleaseChurnCap < 1 {
		add("policy.release_churn_cap: %d; it must be at least 1 (default 5), or a card could be claimed and released forever", c.ReleaseChurnCap)
	}
	if c.ContinuationCap < 1 {
		add("policy.continuation_cap: %d; it must be at least 1 (default 3)", c.ContinuationCap)
	}
	if c.BreakerThreshold < 1 {
		add("policy.breaker_threshold: %d; it must be at least 1 (default 5)", c.BreakerThreshold)
	}
	if c.BreakerWindow <= 0 {
		add("policy.breaker_window: %s; it must be a positive duration (default 5m)", c.BreakerWindow)
	}
	if c.BreakerCooldown <= 0 {
		add("policy.breaker_cooldown: %s; it must be a positive duration (default 1m)", c.BreakerCooldown)
	}

	keys := make([]string, 0, len(c.Kinds))
	for k := range c.Kinds {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, ks := range keys {
		k := Kind(ks)
		kp := c.Kinds[k]
		key := "policy.kinds." + ks
		if !k.Valid() {
			add("%s: %q is not a failure kind; use one of %s", key, ks, kindList())
			continue
		}
		s := Spec(k)
		if kp.Cap != nil {
			switch {
			case s.Counts:
				add("%s.cap: %s counts toward policy.max_attempts; set that instead", key, k)
			case !s.Reschedules:
				add("%s.cap: %s is never retried automatically (%s), so a cap has no effect; remove it", key, k, s.Label())
			case *kp.Cap == 0:
				add("%s.cap: 0 is not allowed; set a positive number of retries or a negative value for no cap", key)
			}
		}
		if (kp.Tiers != nil || kp.Backoff != nil) && !s.Reschedules {
			add("%s: %s is never retried automatically (%s), so a schedule has no effect; remove tiers/backoff", key, k, s.Label())
		}
		if kp.Tiers != nil && kp.Backoff != nil {
			add("%s: both tiers and backoff are set; keep one", key)
		}
		if kp.Tiers != nil && len(kp.Tiers) == 0 {
			add("%s.tiers: empty; list at least one delay (e.g. [1m, 5m, 15m]) or remove the key", key)
		}
		for i, d := range kp.Tiers {
			if d < 0 {
				add("%s.tiers[%d]: %s is negative; use 0 for at once", key, i, d)
			}
		}
		if kp.Backoff != nil {
			checkBackoff(key+".backoff", *kp.Backoff, add)
		}
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

func checkBackoff(key string, b Backoff, add func(string, ...any)) {
	if b.Base <= 0 {
		add("%s.base: %s; it must be a positive duration (default 10s)", key, b.Base)
	}
	if b.Max < b.Base {
		add("%s.max: %s is less than base %s; set max at least base (default 5m)", key, b.Max, b.Base)
	}
	if b.Jitter < 0 || b.Jitter > 1 {
		add("%s.jitter: %g; it must be between 0 and 1 (default 0.1)", key, b.Jitter)
	}
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
