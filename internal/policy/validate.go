package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/suggest"
)

// Validate checks the policy, and its failed_state against the board unless
// b is nil. It returns every problem found, joined (errors.Join); each one's
// text is "KEY: message", KEY the path of the key at fault as WORKFLOW.md
// writes it (policy.breaker.threshold), the message naming the fix. A policy
// that fails here must stop start-up: there is no run-time fallback.
func (c Config) Validate(b *board.Board) error {
	var errs []error
	fail := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("policy."+key+": "+format, a...))
	}
	check := func(ok bool, key, format string, a ...any) {
		if !ok {
			fail(key, format, a...)
		}
	}
	check(c.MaxAttempts != 0, "max_attempts", "0 is not allowed; use a positive number, or -1 for unbounded")
	if b != nil {
		if col, ok := b.Column(c.FailedState); !ok {
			fail("failed_state", "%q is not a column on the board (columns: %s)", c.FailedState, strings.Join(b.Names(), ", "))
		} else {
			check(col.Role == board.RoleBlocked || col.Role == board.RoleCancelled, "failed_state", "%q has role %s; a give-up state must be a sink that automation never reads as ready (a column with role blocked or cancelled)", col.Name, col.Role)
		}
	}
	positive := func(d time.Duration, key, def string) {
		check(d > 0, key, "%s is not allowed; use a positive duration (default %s)", d, def)
	}
	backoff := func(key string, b Backoff) {
		positive(b.Base, key+".base", "10s")
		check(b.Base <= 0 || b.Max >= b.Base, key+".max", "%s is less than base %s; raise max or lower base", b.Max, b.Base)
		check(b.Jitter >= 0 && b.Jitter <= 1, key+".jitter", "%v is out of range; use a fraction from 0 to 1 (e.g. 0.1)", b.Jitter)
	}
	backoff("backoff", c.Backoff)
	for _, n := range []struct {
		key      string
		n, least int
	}{{"release_churn_cap", c.ReleaseChurnCap, 1}, {"continuation_cap", c.ContinuationCap, 1}, {"breaker.threshold", c.BreakerThreshold, 1}} {
		check(n.n >= n.least, n.key, "%d is not allowed; use %d or more", n.n, n.least)
	}
	positive(c.BreakerWindow, "breaker.window", "5m")
	positive(c.BreakerCooldown, "breaker.cooldown", "1m")
	positive(c.CorrelationWindow, "correlation.window", "10m")
	check(c.CorrelationCards == -1 || c.CorrelationCards >= 2, "correlation.cards", "%d is not allowed; use 2 or more, or -1 to turn it off", c.CorrelationCards)
	check(c.QuotaProbe >= 0, "quota_probe", "%s is negative; use a duration such as 30m, or 0 to pause the profile until drover agent resume", c.QuotaProbe)
	check(c.RepeatCap == -1 || c.RepeatCap >= 2, "repeat_cap", "%d is not allowed; use 2 or more, or -1 to turn it off", c.RepeatCap)
	names := kindNames()
	for _, k := range slices.Sorted(maps.Keys(c.Kinds)) {
		kp, key, s := c.Kinds[k], "kinds."+string(k), Spec(k)
		switch {
		case !k.Valid():
			fail(key, "%q is not a failure kind%s; use one of %s", k, suggest.DidYouMean(suggest.Closest(string(k), names)), strings.Join(names, ", "))
			continue
		case kp.Cap != nil && s.Counts && s.DefaultCap == NoCap:
			fail(key+".cap", "%s counts toward policy.max_attempts; set that instead", k)
		case kp.Cap != nil && !s.Reschedules:
			fail(key+".cap", "%s is never retried automatically (%s), so a cap has no effect; remove it", k, s.Label())
		case kp.Cap != nil && *kp.Cap == 0:
			fail(key+".cap", "0 is not allowed; use 1 or more, or -1 for no cap")
		}
		check(kp.Tiers == nil && kp.Backoff == nil || s.Reschedules, key, "%s is never retried automatically (%s), so a schedule has no effect; remove tiers/backoff", k, s.Label())
		check(kp.Tiers == nil || kp.Backoff == nil, key, "sets both tiers and backoff; keep one (tiers are fixed delays, backoff is exponential)")
		check(kp.Tiers == nil || len(kp.Tiers) > 0, key+".tiers", "must be a non-empty list of durations, e.g. [1m, 5m, 15m]")
		for i, d := range kp.Tiers {
			check(d >= 0, fmt.Sprintf("%s.tiers[%d]", key, i), "%s is negative; use 0 for at once", d)
		}
		if kp.Backoff != nil {
			backoff(key+".backoff", *kp.Backoff)
		}
	}
	return errors.Join(errs...)
}
