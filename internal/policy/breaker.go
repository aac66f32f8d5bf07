package policy

import (
	"fmt"
	"time"
)

// Breaker states of an agent profile.
const (
	BreakerClosed   = "closed"    // dispatch as usual
	BreakerOpen     = "open"      // no dispatch until Until
	BreakerHalfOpen = "half_open" // exactly one probe run may start
	BreakerPaused   = "paused"    // no dispatch until an operator resumes the profile
)

// BreakerState is one agent profile's circuit breaker. The dispatcher stores
// it (so a restart keeps it) and changes it only through the functions below.
// The zero value is a closed breaker.
type BreakerState struct {
	State       string      `json:"state"`
	Kind        Kind        `json:"kind,omitempty"`   // the kind that opened or paused it
	Reason      string      `json:"reason,omitempty"` // why, in words
	Since       *time.Time  `json:"since,omitempty"`  // when it last left closed
	Until       *time.Time  `json:"until,omitempty"`  // open: when the probe may start; nil when paused
	Hits        []time.Time `json:"hits,omitempty"`   // profile-level failures within the window
	ProbeCardID string      `json:"probe_card_id,omitempty"`
	// ProbeCard is the probe's identifier (DRV-7), for the words operators
	// read; ProbeCardID is for matching. A state stored before it existed
	// has only the id.
	ProbeCard string `json:"probe_card,omitempty"`
	// A hold (hold.go): the breaker opened because one failure fingerprint
	// ended runs on several cards. Shape is the failure's normalised text,
	// Example a run that showed it, Cards the cards' identifiers, and
	// FailedProbes how many probes failed alike since.
	Fingerprint  string   `json:"fingerprint,omitempty"`
	Shape        string   `json:"shape,omitempty"`
	Example      string   `json:"example_run,omitempty"`
	Cards        []string `json:"cards,omitempty"`
	FailedProbes int      `json:"failed_probes,omitempty"`
}

func (st BreakerState) state() string {
	if st.State == "" {
		return BreakerClosed
	}
	return st.State
}

func (st BreakerState) clone() BreakerState {
	st.Hits = append([]time.Time(nil), st.Hits...)
	st.Cards = append([]string(nil), st.Cards...)
	return st
}

// CardRef names a card: its id, for matching, and its identifier (DRV-7),
// for the words operators read.
type CardRef struct{ ID, Identifier string }

// String is the identifier, or the id when the card has none.
func (c CardRef) String() string {
	if c.Identifier != "" {
		return c.Identifier
	}
	return c.ID
}

// Observe feeds one routed run of the profile into its breaker and returns the
// new state and whether the state (or its Until) changed; the dispatcher writes
// an event, and for a pause a profile_paused notification, only when changed.
//
//   - auth_failed, quota_exhausted, config_error pause the profile until an
//     operator resumes it (Until nil). A paused breaker ignores everything else,
//     so a burst of such failures pauses and notifies once.
//   - usage_limited opens the breaker at once until retryAt (or the cooldown).
//   - rate_limited and provider_unavailable are hits: BreakerThreshold hits
//     within BreakerWindow open it until max(retryAt, at+BreakerCooldown). A hit
//     while half-open re-opens it; a hit while open may push Until later. A
//     hit whose server states a wait of BreakerWindow or more (a retry-after
//     of two hours, a reset time tomorrow) opens it at once until then: the
//     other cards would each claim, run and meet the same wait, and the
//     threshold could not be reached within the window anyway.
//   - any other outcome of the probe card while half-open closes the breaker:
//     the provider answered.
//
// Reasons name the card by its identifier (DRV-7), as operators know it.
func Observe(cfg Config, st BreakerState, kind Kind, card CardRef, at, retryAt time.Time) (BreakerState, bool) {
	st = st.clone()
	prev := st.state()
	if prev == BreakerPaused {
		return st, false
	}
	s := Spec(kind)
	if !known(kind) {
		s.Profile = ProfileNone
	}
	switch s.Profile {
	case ProfileUntilOperator:
		if ProbesCredit(cfg, kind) {
			if (prev == BreakerOpen || prev == BreakerHalfOpen) && st.Kind == kind {
				return st, false // another live run found the credit gone too
			}
			until := at.Add(cfg.QuotaProbe)
			return BreakerState{State: BreakerOpen, Kind: kind, Since: &at, Until: &until,
				Reason: fmt.Sprintf("%s on card %s: the account's credit is spent; one probe card runs at %s (then at doubling waits up to %s) and the profile goes on by itself once credit is added; drover agent resume goes at once",
					kind, card, clock(until, at), FormatDuration(MaxQuotaProbe))}, true
		}
		return BreakerState{State: BreakerPaused, Kind: kind, Since: &at,
			Reason: fmt.Sprintf("%s on card %s: paused until an operator runs drover agent resume", kind, card)}, true
	case ProfileBreaker, ProfileUntilReset:
		st.Hits = pruneHits(st.Hits, at.Add(-cfg.BreakerWindow))
		st.Hits = append(st.Hits, at)
		until := at.Add(cfg.BreakerCooldown)
		if retryAt.After(until) {
			until = retryAt
		}
		long, waitWords := statedWait(cfg, s.Profile, kind, card, at, retryAt)
		if long && until.After(at.Add(MaxStatedHold)) {
			// The cards wait as stated; the profile probes sooner, so a
			// misread or overcautious wait cannot stop it for days.
			until = at.Add(max(MaxStatedHold, cfg.BreakerCooldown))
			waitWords += fmt.Sprintf("; one probe card runs at %s", clock(until, at))
		}
		switch {
		case prev == BreakerOpen:
			if st.Until == nil || until.After(*st.Until) {
				st.Until = &until
				if long && st.Fingerprint == "" {
					st.Kind, st.Reason = kind, waitWords // what now keeps it open
				}
				return st, true
			}
			return st, false
		case prev == BreakerHalfOpen && long:
			return st.open(kind, at, until, waitWords+" (the probe met it)"), true
		case prev == BreakerHalfOpen:
			return st.open(kind, at, until, fmt.Sprintf("%s on card %s while half-open", kind, card)), true
		case s.Profile == ProfileUntilReset:
			return st.open(kind, at, until, fmt.Sprintf("%s on card %s: the plan's usage window is spent", kind, card)), true
		case long:
			return st.open(kind, at, until, waitWords), true
		case len(st.Hits) >= max(cfg.BreakerThreshold, 1):
			return st.open(kind, at, until, fmt.Sprintf("%d profile-level failures within %s (last: %s on card %s)",
				len(st.Hits), FormatDuration(cfg.BreakerWindow), kind, card)), true
		}
		return st, false
	}
	if prev == BreakerHalfOpen && st.ProbeCardID != "" && card.ID == st.ProbeCardID {
		return closed(), true
	}
	return st, false
}

func (st BreakerState) open(kind Kind, at, until time.Time, reason string) BreakerState {
	// A hold's fingerprint stays: a rate limit or an outage while a profile
	// is held does not make its held failure count again.
	st.State, st.Kind, st.Reason, st.Since, st.Until, st.ProbeCardID, st.ProbeCard = BreakerOpen, kind, reason, &at, &until, "", ""
	return st
}

func closed() BreakerState { return BreakerState{State: BreakerClosed} }

func pruneHits(hits []time.Time, after time.Time) []time.Time {
	out := hits[:0]
	for _, h := range hits {
		if h.After(after) {
			out = append(out, h)
		}
	}
	return out
}

// Allow says whether the profile may start a run now. probe is true when the
// run would be the single half-open probe: the dispatcher then records it with
// StartProbe before it starts. why explains a refusal (or the probe).
func Allow(st BreakerState, now time.Time) (ok bool, probe bool, why string) {
	switch st.state() {
	case BreakerPaused:
		return false, false, fmt.Sprintf("paused until an operator resumes it (%s)", st.Reason)
	case BreakerOpen:
		if st.Until != nil && now.Before(*st.Until) {
			return false, false, fmt.Sprintf("breaker open until %s: %s", clock(*st.Until, now), st.Reason)
		}
		return true, true, "breaker cooldown over: one probe run"
	case BreakerHalfOpen:
		if st.ProbeCardID != "" {
			return false, false, fmt.Sprintf("breaker half-open: waiting for probe card %s", CardRef{ID: st.ProbeCardID, Identifier: st.ProbeCard})
		}
		return true, true, "breaker half-open: one probe run"
	}
	return true, false, ""
}

// StartProbe records that card is the half-open probe.
func StartProbe(st BreakerState, card CardRef) BreakerState {
	st = st.clone()
	st.State, st.ProbeCardID, st.ProbeCard = BreakerHalfOpen, card.ID, card.Identifier
	return st
}

// ReleaseProbe forgets a probe that was released without running, so another
// card may probe.
func ReleaseProbe(st BreakerState) BreakerState {
	st = st.clone()
	if st.state() == BreakerHalfOpen {
		st.ProbeCardID, st.ProbeCard = "", ""
	}
	return st
}

// ProbeResult closes the breaker after a successful probe, or re-opens it for
// another cooldown after a failed one. It needs cfg for the cooldown (a
// deliberate addition to the sketched signature).
func ProbeResult(cfg Config, st BreakerState, succeeded bool, now time.Time) BreakerState {
	if st.state() == BreakerPaused {
		return st.clone()
	}
	if succeeded {
		return closed()
	}
	return st.clone().open(st.Kind, now, now.Add(cfg.BreakerCooldown), "the probe run failed")
}

// MaxQuotaProbe bounds the wait between the probes of a profile whose
// credit is spent.
const MaxQuotaProbe = 4 * time.Hour

// MaxStatedHold bounds how long one stated wait holds a profile before a
// probe card tries the provider again (the cards themselves wait as
// stated).
const MaxStatedHold = 4 * time.Hour

// statedWait reports whether a rate limit's or an outage's server stated a
// wait of the breaker's window or more (then one hit opens the breaker),
// and says so for its reason.
func statedWait(cfg Config, p ProfileEffect, kind Kind, card CardRef, at, retryAt time.Time) (bool, string) {
	wait := retryAt.Sub(at)
	if p != ProfileBreaker || cfg.BreakerWindow <= 0 || wait < cfg.BreakerWindow {
		return false, ""
	}
	return true, fmt.Sprintf("%s on card %s: the provider asks to wait %s, at least the breaker's window of %s",
		kind, card, FormatDuration(wait), FormatDuration(cfg.BreakerWindow))
}

// ProbesCredit says whether kind k holds its profile with probes at
// growing waits (policy.quota_probe) instead of pausing it until an
// operator: only quota_exhausted, whose fix (credit added in a billing
// console) drover is not told of, and whose probe the provider refuses
// before any work, so it costs nothing.
func ProbesCredit(cfg Config, k Kind) bool { return k == KindQuotaExhausted && cfg.QuotaProbe > 0 }

// CreditProbeFailed is the breaker after the probe of a profile whose
// credit is spent found it spent still: open again for twice the last
// wait, at most MaxQuotaProbe.
func CreditProbeFailed(cfg Config, st BreakerState, probe CardRef, now time.Time) BreakerState {
	st = st.clone()
	st.FailedProbes++
	wait := cfg.QuotaProbe
	for i := 0; i < st.FailedProbes && wait < MaxQuotaProbe; i++ {
		wait *= 2
	}
	until := now.Add(min(wait, MaxQuotaProbe))
	st.State, st.Until, st.ProbeCardID, st.ProbeCard = BreakerOpen, &until, "", ""
	st.Reason = fmt.Sprintf("%s: the probe on card %s found the account's credit still spent (%d probes so far); the next probe runs at %s. Add credit (the probe finds it), or drover agent resume to go at once",
		st.Kind, probe, st.FailedProbes, clock(until, now))
	return st
}

// ResumeByOperator closes the breaker whatever its state (drover agent resume).
func ResumeByOperator(st BreakerState) BreakerState { return closed() }
