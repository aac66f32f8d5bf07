package policy

import (
	"strings"
	"time"
)

// schedule returns the delays that apply to kind k: fixed tiers when the kind
// has them (config first, then the built-in table), otherwise an exponential
// backoff (the kind's own, else policy.backoff).
func (c Config) schedule(k Kind) (tiers []time.Duration, bo Backoff) {
	kp := c.Kinds[k]
	switch {
	case kp.Tiers != nil:
		return kp.Tiers, Backoff{}
	case kp.Backoff != nil:
		return nil, *kp.Backoff
	}
	if t := Spec(k).DefaultTiers; t != nil {
		return t, Backoff{}
	}
	return nil, c.Backoff
}

// Delay is the wait before the n-th retry (n ≥ 1) of kind k: for counted kinds
// n is the number of counted attempts so far, for other kinds the number of runs
// of that kind in the epoch. Tiers are used as written (the last repeats).
// Exponential delays are Base × 2^(n-1), at most Max, less a random fraction
// (rnd()·Jitter) of the delay: jitter spreads the retries of many cards, and
// taking it off (never adding it) keeps every retry no later than the
// ladder's step, so drover shows its next truth no later than a peer's
// unjittered ladder would. rnd returns values in [0,1); nil means no jitter.
func Delay(cfg Config, k Kind, n int, rnd func() float64) time.Duration {
	if n < 1 {
		n = 1
	}
	tiers, bo := cfg.schedule(k)
	if len(tiers) > 0 {
		if n > len(tiers) {
			n = len(tiers)
		}
		return tiers[n-1]
	}
	d := bo.Base
	for i := 1; i < n && d < bo.Max; i++ {
		d *= 2
	}
	if bo.Max > 0 && d > bo.Max {
		d = bo.Max
	}
	if d < 0 {
		d = 0
	}
	if rnd == nil || bo.Jitter <= 0 {
		return d
	}
	r := rnd()
	if r < 0 || r >= 1 {
		r = 0
	}
	return d - time.Duration(float64(d)*bo.Jitter*r)
}

// Schedule lists the first count delays of kind k without jitter, for
// `drover policy show` and explain.
func Schedule(cfg Config, k Kind, count int) []time.Duration {
	out := make([]time.Duration, 0, max(count, 0))
	for n := 1; n <= count; n++ {
		out = append(out, Delay(cfg, k, n, nil))
	}
	return out
}

// FormatDuration prints a duration the way WORKFLOW.md spells it: 10s, 1m20s,
// 5m, 1h30m; 0 prints as "now".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "now"
	}
	if d < time.Second {
		return d.String()
	}
	d = d.Round(time.Second)
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
