package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// The same failure across cards is the profile's problem. When one
// fingerprint of a counted kind (unknown included) ends runs on
// CorrelationCards distinct cards of one profile within CorrelationWindow,
// no card could have changed it: the profile is held (its breaker opens,
// with the fingerprint), the runs that showed it are not counted, and the
// cards wait on the profile instead of spending their budgets. After a
// cooldown one probe card runs: a probe that fails the same way holds the
// profile again for twice the cooldown (at most MaxHoldCooldown); one that
// succeeds, or fails differently, releases it.

// MaxHoldCooldown bounds how long a held profile waits between probes
// while they keep failing alike.
const MaxHoldCooldown = time.Hour

// Peer is a finished run of the same profile and fingerprint, with its
// card's identifier.
type Peer struct {
	board.Run
	Card string
}

// Hold says a run's failure is its profile's, not its card's.
type Hold struct {
	Fingerprint string
	Profile     string
	Cards       []string // identifiers of the cards that showed it, this one last
	Until       time.Time
	// New: this run's routing opens the hold (the breaker was closed);
	// Probe: this run was the held profile's probe and failed alike.
	New, Probe bool
	// Since is the start of the window whose runs of the fingerprint the
	// new hold uncounts (they did not spend their cards' budgets).
	Since time.Time
	// CardUntil is when this card may run again: Until, or for a probe that
	// failed alike a cooldown later still, so the next probe is another card.
	CardUntil time.Time
}

// CorrelationOn reports whether correlation across cards is enabled.
func (c Config) CorrelationOn() bool { return c.CorrelationCards > 0 }

// HoldFor says whether the failure fingerprinted fp, of kind, that ended a
// run of card on profile is the profile's: the profile is held for fp
// already (its breaker says so), or peers (the profile's runs that
// finished within the window) show it on CorrelationCards distinct cards,
// this one included, with no success of the profile since the first of
// them (a profile whose other cards succeed meanwhile works: their
// failures are their own). Only counted kinds with error text are held:
// the other kinds have their own rules (a breaker, a pause, a block), and
// two failures without text are alike in too little.
func HoldFor(cfg Config, st BreakerState, fp string, kind Kind, card CardRef, profile string, peers []Peer, now time.Time) *Hold {
	if !Informative(fp) || !Spec(kind).Counts || !known(kind) || !cfg.CorrelationOn() {
		return nil
	}
	if st.Fingerprint == fp && st.state() != BreakerClosed && st.state() != BreakerPaused {
		h := &Hold{Fingerprint: fp, Profile: profile, Cards: st.Cards, Probe: st.ProbeCardID == card.ID}
		h.Until = now.Add(cfg.BreakerCooldown)
		if st.Until != nil && st.Until.After(now) {
			h.Until = *st.Until
		}
		h.CardUntil = h.Until
		if h.Probe {
			wait := holdCooldown(cfg, st.FailedProbes+1)
			h.Until, h.CardUntil = now.Add(wait), now.Add(2*wait)
		}
		return h
	}
	if st.state() != BreakerClosed {
		return nil
	}
	seen := map[string]bool{card.ID: true}
	var cards []string
	var first *time.Time
	for _, r := range peers {
		if r.Fingerprint != fp || r.FinishedAt == nil || r.FinishedAt.Before(now.Add(-cfg.CorrelationWindow)) {
			continue
		}
		if first == nil || r.FinishedAt.Before(*first) {
			first = r.FinishedAt
		}
		if !seen[r.CardID] {
			seen[r.CardID] = true
			cards = append(cards, nonEmpty(r.Card, r.CardID))
		}
	}
	if len(seen) < max(cfg.CorrelationCards, 2) || succeededSince(peers, *first) {
		return nil
	}
	until := now.Add(cfg.BreakerCooldown)
	return &Hold{Fingerprint: fp, Profile: profile, Cards: append(cards, card.String()), Until: until, CardUntil: until,
		New: true, Since: now.Add(-cfg.CorrelationWindow)}
}

// holdCooldown is the wait before the next probe after n probes failed
// alike: the breaker cooldown doubled per failed probe, at most
// MaxHoldCooldown.
func holdCooldown(cfg Config, n int) time.Duration {
	d := cfg.BreakerCooldown
	for i := 0; i < n && d < MaxHoldCooldown; i++ {
		d *= 2
	}
	return min(d, MaxHoldCooldown)
}

// OpenHold is the breaker of a profile the hold h opens: open until
// h.Until with the fingerprint, the failure's shape (its normalised text),
// the cards and an example run, in words an operator acts on.
func OpenHold(cfg Config, h Hold, kind Kind, shape, exampleRun string, now time.Time) BreakerState {
	until := h.Until
	reason := fmt.Sprintf("the same failure (%s: %s) ended runs on %d cards within %s (%s; example run %s): no card can fix it, so their budgets are not spent; one probe card runs at %s",
		kind, clipShape(shape), len(h.Cards), FormatDuration(cfg.CorrelationWindow), strings.Join(h.Cards, ", "), exampleRun, clock(until, now))
	return BreakerState{State: BreakerOpen, Kind: kind, Reason: reason, Since: &now, Until: &until,
		Fingerprint: h.Fingerprint, Shape: clipShape(shape), Example: exampleRun, Cards: h.Cards}
}

// HoldAgain is the breaker after its probe failed the same way: open for a
// longer cooldown, the fingerprint kept.
func HoldAgain(cfg Config, st BreakerState, probe CardRef, now time.Time) BreakerState {
	st = st.clone()
	st.FailedProbes++
	until := now.Add(holdCooldown(cfg, st.FailedProbes))
	st.State, st.Until, st.ProbeCardID, st.ProbeCard = BreakerOpen, &until, "", ""
	st.Reason = fmt.Sprintf("the same failure (%s: %s) that ended runs on %s ended the probe on %s too (%d probes so far); the next probe runs at %s. Fix the cause (example run %s shows it), or drover agent resume the profile to probe now",
		st.Kind, st.Shape, strings.Join(st.Cards, ", "), probe, st.FailedProbes, clock(until, now), st.Example)
	return st
}

// ProbeTests says what a held profile's probe will test, for explain and
// the dashboard: whether the failure is still there.
func (st BreakerState) ProbeTests() string {
	if st.Fingerprint == "" {
		return ""
	}
	return fmt.Sprintf("whether %s still fails with %s: %s (a success or any other failure releases the profile)", nonEmpty(st.ProbeCard, "the next card"), st.Kind, st.Shape)
}

func clipShape(s string) string {
	if len(s) > 160 {
		return strings.ToValidUTF8(s[:160], "") + "…"
	}
	return s
}

// succeededSince: a run among peers succeeded after t.
func succeededSince(peers []Peer, t time.Time) bool {
	for _, r := range peers {
		if r.Outcome == board.OutcomeSucceeded && r.FinishedAt != nil && r.FinishedAt.After(t) {
			return true
		}
	}
	return false
}
