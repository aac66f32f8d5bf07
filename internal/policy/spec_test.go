package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

func TestSpecTable(t *testing.T) {
	cases := []struct {
		k       Kind
		verb    Verb
		label   string
		counts  bool
		cap     int
		profile ProfileEffect
	}{
		{KindRateLimited, VerbDefer, "defer", false, 5, ProfileBreaker},
		{KindUsageLimited, VerbDefer, "pause_profile_and_defer_until_reset", false, NoCap, ProfileUntilReset},
		{KindQuotaExhausted, VerbDefer, "pause_profile_and_defer", false, NoCap, ProfileUntilOperator},
		{KindProviderUnavailable, VerbRetry, "retry", false, 10, ProfileBreaker},
		{KindNetwork, VerbRetry, "retry", false, 3, ProfileNone},
		{KindWorkspaceSetup, VerbRetry, "retry", false, 3, ProfileNone},
		{KindInterrupted, VerbRetry, "retry", false, 3, ProfileNone},
		{KindAuthFailed, VerbDefer, "pause_profile_and_defer", false, NoCap, ProfileUntilOperator},
		{KindConfigError, VerbDefer, "pause_profile_and_defer", false, NoCap, ProfileUntilOperator},
		{KindInvalidInput, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindContextExhausted, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindPermissionDenied, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindRefused, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindAgentBlocked, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindInputRequired, VerbPark, "park", false, NoCap, ProfileNone},
		{KindAgentFailed, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindMaxTurns, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindTimeout, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindStalled, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindUnknown, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindVerifyFailed, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindNoProgress, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindRepeatedFailure, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindCancelled, VerbHold, "hold", false, NoCap, ProfileNone},
		{KindSpendLimit, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindNoChange, VerbRetry, "retry", true, 2, ProfileNone},
		{KindPushRejected, VerbBlock, "block", false, NoCap, ProfileNone},
		{KindCheckFailed, VerbRetry, "retry", true, NoCap, ProfileNone},
		{KindSucceeded, VerbComplete, "complete", false, NoCap, ProfileNone},
	}
	seen := map[Kind]bool{}
	for _, c := range cases {
		seen[c.k] = true
		s := Spec(c.k)
		if s.Kind != c.k || s.Verb != c.verb || s.Label() != c.label || s.Counts != c.counts || s.Profile != c.profile {
			t.Errorf("Spec(%s) = %+v (label %s)", c.k, s, s.Label())
		}
		if got := Defaults().Cap(c.k); got != c.cap {
			t.Errorf("Defaults().Cap(%s) = %d, want %d", c.k, got, c.cap)
		}
		if s.WhatCanChange == "" || s.Outcome == board.OutcomeNone {
			t.Errorf("Spec(%s) lacks WhatCanChange or Outcome", c.k)
		}
		if s.ProfileLevel() != (c.profile != ProfileNone) {
			t.Errorf("Spec(%s).ProfileLevel wrong", c.k)
		}
	}
	for _, k := range Kinds {
		if !seen[k] {
			t.Errorf("kind %s has no row in this test", k)
		}
	}
	if s := Spec("bogus"); s.Verb != VerbRetry || !s.Counts || s.Kind != "bogus" {
		t.Errorf("unknown kinds must be treated like unknown: %+v", s)
	}
}

func TestDefaults(t *testing.T) {
	c := Defaults()
	if c.MaxAttempts != 10 || c.FailedState != "blocked" || c.ReleaseChurnCap != 5 || c.ContinuationCap != 3 ||
		c.Backoff != (Backoff{10 * time.Second, 5 * time.Minute, 0.1}) ||
		c.BreakerThreshold != 5 || c.BreakerWindow != 5*time.Minute || c.BreakerCooldown != time.Minute {
		t.Fatalf("Defaults() = %+v", c)
	}
	if b := board.Default(); c.Validate(&b) != nil {
		t.Fatalf("defaults must validate: %v", c.Validate(&b))
	}
	if err := c.Validate(nil); err != nil {
		t.Fatalf("defaults must validate: %v", err)
	}
	neg := -1
	c.Kinds[KindNetwork] = KindPolicy{Cap: &neg}
	if c.Cap(KindNetwork) != NoCap {
		t.Error("a negative cap means no cap")
	}
}

func TestValidate(t *testing.T) {
	zero, three := 0, 3
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"max_attempts 0", func(c *Config) { c.MaxAttempts = 0 }, "policy.max_attempts: 0 is not allowed"},
		{"unbounded ok", func(c *Config) { c.MaxAttempts = -1 }, ""},
		{"failed_state empty", func(c *Config) { c.FailedState = "" }, `policy.failed_state: "" is not a column on the board`},
		{"failed_state missing", func(c *Config) { c.FailedState = "stuck" }, `policy.failed_state: "stuck" is not a column on the board (columns: backlog, ready`},
		{"failed_state not sink", func(c *Config) { c.FailedState = "ready" }, `policy.failed_state: "ready" has role eligible`},
		{"failed_state done", func(c *Config) { c.FailedState = "done" }, `has role done`},
		{"failed_state cancelled ok", func(c *Config) { c.FailedState = "cancelled" }, ""},
		{"backoff base", func(c *Config) { c.Backoff.Base = 0 }, "policy.backoff.base"},
		{"backoff max", func(c *Config) { c.Backoff.Max = time.Second }, "policy.backoff.max"},
		{"jitter", func(c *Config) { c.Backoff.Jitter = 2 }, "policy.backoff.jitter"},
		{"churn", func(c *Config) { c.ReleaseChurnCap = 0 }, "policy.release_churn_cap"},
		{"continuation", func(c *Config) { c.ContinuationCap = -1 }, "policy.continuation_cap"},
		{"breaker", func(c *Config) { c.BreakerThreshold = 0 }, "policy.breaker.threshold"},
		{"unknown kind", func(c *Config) { c.Kinds["nope"] = KindPolicy{} }, `policy.kinds.nope: "nope" is not a failure kind`},
		{"cap 0", func(c *Config) { c.Kinds[KindNetwork] = KindPolicy{Cap: &zero} }, "policy.kinds.network.cap: 0 is not allowed"},
		{"cap on counted", func(c *Config) { c.Kinds[KindAgentFailed] = KindPolicy{Cap: &three} }, "policy.kinds.agent_failed.cap: agent_failed counts toward policy.max_attempts"},
		{"cap on block kind", func(c *Config) { c.Kinds[KindRefused] = KindPolicy{Cap: &three} }, "policy.kinds.refused.cap"},
		{"both", func(c *Config) {
			c.Kinds[KindNetwork] = KindPolicy{Tiers: []time.Duration{1}, Backoff: &Backoff{Base: 1, Max: 1}}
		}, "both tiers and backoff"},
		{"negative tier", func(c *Config) { c.Kinds[KindNetwork] = KindPolicy{Tiers: []time.Duration{-1}} }, "policy.kinds.network.tiers[0]"},
	}
	for _, c := range cases {
		cfg := Defaults()
		c.mod(&cfg)
		b := board.Default()
		err := cfg.Validate(&b)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want it to contain %q", c.name, err, c.want)
		}
	}
	cfg := Defaults()
	cfg.MaxAttempts, cfg.FailedState = 0, "nowhere"
	b := board.Default()
	err := cfg.Validate(&b)
	if j, ok := err.(interface{ Unwrap() []error }); !ok || len(j.Unwrap()) != 2 {
		t.Errorf("all problems are reported at once: %v", err)
	}
}
