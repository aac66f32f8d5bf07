package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

func peer(id, card string, fp string, at time.Time, counted bool) Peer {
	fin := at
	return Peer{Run: board.Run{ID: id, CardID: card, Fingerprint: fp, FinishedAt: &fin, Counted: counted, Outcome: board.OutcomeFailed}, Card: strings.ToUpper(card)}
}

// TestHoldFor: the same fingerprint of a counted kind on CorrelationCards
// distinct cards within the window holds the profile; fewer cards, another
// fingerprint, an old run, a kind with rules of its own, or correlation
// off do not; a profile held for the fingerprint holds every card that
// shows it, and its probe's same failure holds it again for longer.
func TestHoldFor(t *testing.T) {
	cfg := Defaults() // 3 cards in 10m, cooldown 1m
	me := CardRef{ID: "c3", Identifier: "DRV-3"}
	fp := Fingerprint(KindUnknown, "account suspended", 1)
	other := Fingerprint(KindUnknown, "disk full", 1)
	two := []Peer{peer("r1", "c1", fp, t0.Add(-time.Minute), true), peer("r2", "c2", fp, t0.Add(-30*time.Second), true)}
	cases := []struct {
		name  string
		cfg   func(Config) Config
		st    BreakerState
		kind  Kind
		peers []Peer
		want  string // "" no hold, "new", "held", "probe"
	}{
		{"three cards hold the profile", nil, BreakerState{}, KindUnknown, two, "new"},
		{"two cards do not", nil, BreakerState{}, KindUnknown, two[:1], ""},
		{"no text", nil, BreakerState{}, KindUnknown, []Peer{peer("r1", "c1", Fingerprint(KindUnknown, "", 1), t0, true), peer("r2", "c2", Fingerprint(KindUnknown, "", 1), t0, true)}, ""},
		{"one card failing twice is not two cards", nil, BreakerState{}, KindUnknown,
			[]Peer{peer("r1", "c1", fp, t0, true), peer("r0", "c1", fp, t0, true)}, ""},
		{"another fingerprint does not count", nil, BreakerState{}, KindUnknown,
			[]Peer{two[0], peer("r2", "c2", other, t0, true)}, ""},
		{"outside the window does not count", nil, BreakerState{}, KindUnknown,
			[]Peer{two[0], peer("r2", "c2", fp, t0.Add(-11*time.Minute), true)}, ""},
		{"a rate limit has a breaker of its own", nil, BreakerState{}, KindRateLimited, two, ""},
		{"a success of the profile since the first failure: the profile works", nil, BreakerState{}, KindUnknown,
			append(append([]Peer(nil), two...), Peer{Run: board.Run{ID: "ok", CardID: "c4", Outcome: board.OutcomeSucceeded, FinishedAt: ptr(t0.Add(-45 * time.Second))}}), ""},
		{"a success before the first failure does not count", nil, BreakerState{}, KindUnknown,
			append(append([]Peer(nil), two...), Peer{Run: board.Run{ID: "ok", CardID: "c4", Outcome: board.OutcomeSucceeded, FinishedAt: ptr(t0.Add(-2 * time.Minute))}}), "new"},
		{"correlation off", func(c Config) Config { c.CorrelationCards = -1; return c }, BreakerState{}, KindUnknown, two, ""},
		{"two cards when the config says two", func(c Config) Config { c.CorrelationCards = 2; return c }, BreakerState{}, KindUnknown, two[:1], "new"},
		{"a profile held for it holds the card", nil, BreakerState{State: BreakerOpen, Fingerprint: fp}, KindUnknown, nil, "held"},
		{"a profile held for another failure does not", nil, BreakerState{State: BreakerOpen, Fingerprint: other}, KindUnknown, two, ""},
		{"the probe failing alike holds again", nil, BreakerState{State: BreakerHalfOpen, Fingerprint: fp, ProbeCardID: "c3"}, KindUnknown, nil, "probe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf := cfg
			if c.cfg != nil {
				cf = c.cfg(cf)
			}
			kfp := fp
			if c.name == "no text" {
				kfp = Fingerprint(KindUnknown, "", 1)
			}
			if c.kind != KindUnknown {
				kfp = Fingerprint(c.kind, "account suspended", 1)
			}
			h := HoldFor(cf, c.st, kfp, c.kind, me, "claude", c.peers, t0)
			got := ""
			switch {
			case h == nil:
			case h.New:
				got = "new"
			case h.Probe:
				got = "probe"
			default:
				got = "held"
			}
			if got != c.want {
				t.Fatalf("hold = %+v (%s), want %q", h, got, c.want)
			}
			if got == "new" {
				if !h.Since.Equal(t0.Add(-cf.CorrelationWindow)) || h.Cards[len(h.Cards)-1] != "DRV-3" || !h.Until.Equal(t0.Add(time.Minute)) || !h.CardUntil.Equal(h.Until) {
					t.Errorf("new hold %+v: want the window's runs uncounted, this card last, until the cooldown", h)
				}
			}
			if got == "probe" && (!h.Until.Equal(t0.Add(2*time.Minute)) || !h.CardUntil.Equal(t0.Add(4*time.Minute))) {
				t.Errorf("probe hold until %s, the probe card until %s; want twice the cooldown, and the card a cooldown later still (the next probe is another card)", h.Until, h.CardUntil)
			}
		})
	}
}

// TestHoldBreaker: the breaker a hold opens names the failure, the cards
// and an example run; a failed probe doubles the wait up to an hour.
func TestHoldBreaker(t *testing.T) {
	cfg := Defaults()
	h := Hold{Fingerprint: "unknown:ab", Profile: "claude", Cards: []string{"DRV-1", "DRV-2", "DRV-3"}, Until: t0.Add(time.Minute), New: true}
	st := OpenHold(cfg, h, KindUnknown, "error: account <id> is suspended", "01RUN", t0)
	if st.State != BreakerOpen || st.Fingerprint != "unknown:ab" || st.Example != "01RUN" || !st.Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("OpenHold = %+v", st)
	}
	for _, w := range []string{"account <id> is suspended", "DRV-1, DRV-2, DRV-3", "01RUN", "3 cards"} {
		if !strings.Contains(st.Reason, w) {
			t.Errorf("reason %q does not say %q", st.Reason, w)
		}
	}
	if ok, _, _ := Allow(st, t0.Add(30*time.Second)); ok {
		t.Error("a held profile must not run during its cooldown")
	}
	if ok, probe, _ := Allow(st, t0.Add(time.Minute)); !ok || !probe {
		t.Error("after the cooldown one probe runs")
	}
	if !strings.Contains(st.ProbeTests(), "account <id> is suspended") {
		t.Errorf("ProbeTests = %q", st.ProbeTests())
	}
	waits := []time.Duration{2, 4, 8, 16, 32, 60, 60}
	for i, w := range waits {
		st = HoldAgain(cfg, StartProbe(st, CardRef{ID: "c9", Identifier: "DRV-9"}), CardRef{ID: "c9", Identifier: "DRV-9"}, t0)
		if got := st.Until.Sub(t0); got != w*time.Minute || st.FailedProbes != i+1 || st.Fingerprint == "" || st.ProbeCardID != "" {
			t.Fatalf("after %d failed probes: wait %s (want %dm) %+v", i+1, got, w, st)
		}
	}
	if !strings.Contains(st.Reason, "DRV-9") {
		t.Errorf("reason after a failed probe: %q", st.Reason)
	}
	if c := ProbeResult(cfg, st, true, t0); c.State != BreakerClosed || c.Fingerprint != "" {
		t.Errorf("a probe that passes releases the hold: %+v", c)
	}
}

// TestDecideHeld: a held run is deferred, not counted, until the hold's
// probe time, with words for each case.
func TestDecideHeld(t *testing.T) {
	for _, c := range []struct {
		h    Hold
		says string
	}{
		{Hold{Profile: "claude", Cards: []string{"DRV-1", "DRV-2", "DRV-7"}, Until: t0.Add(time.Minute), New: true}, "the same way on 3 cards (DRV-1, DRV-2, DRV-7)"},
		{Hold{Profile: "claude", Until: t0.Add(time.Minute)}, "the way agent profile claude is held for"},
		{Hold{Profile: "claude", Until: t0.Add(2 * time.Minute), Probe: true}, "the probe of held agent profile claude"},
	} {
		in := input(Defaults(), KindUnknown, hist(KindUnknown, KindUnknown, KindUnknown, KindUnknown, KindUnknown, KindUnknown, KindUnknown, KindUnknown, KindUnknown))
		h := c.h
		h.CardUntil = h.Until
		in.Hold = &h
		d := Decide(in)
		if d.Verb != VerbDefer || d.Counted || d.Outcome != board.OutcomeDeferred || d.NextState != "ready" || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(c.h.Until) {
			t.Errorf("held decision %+v, want an uncounted deferral to %s (even on the 10th attempt)", d, c.h.Until)
		}
		if !strings.Contains(d.Explain, c.says) || !strings.Contains(d.Explain, "not counted") {
			t.Errorf("explain %q, want it to say %q and not counted", d.Explain, c.says)
		}
	}
}

func ptr(t time.Time) *time.Time { return &t }

// TestHoldSurvivesARateLimit: a rate limit (or an outage) while a profile
// is held and probing opens the breaker for its own reason but keeps the
// hold: the held failure still does not count.
func TestHoldSurvivesARateLimit(t *testing.T) {
	cfg := Defaults()
	fp := Fingerprint(KindUnknown, "account suspended", 1)
	st := OpenHold(cfg, Hold{Fingerprint: fp, Cards: []string{"DRV-1", "DRV-2", "DRV-3"}, Until: t0}, KindUnknown, "account suspended", "r1", t0.Add(-time.Minute))
	st = StartProbe(st, CardRef{ID: "c9", Identifier: "DRV-9"})
	st, _ = Observe(cfg, st, KindRateLimited, CardRef{ID: "c9", Identifier: "DRV-9"}, t0, time.Time{})
	if st.State != BreakerOpen || st.Fingerprint != fp {
		t.Fatalf("after a rate limit on the probe: %+v, want open with the hold kept", st)
	}
	if h := HoldFor(cfg, st, fp, KindUnknown, CardRef{ID: "c4", Identifier: "DRV-4"}, "claude", nil, t0); h == nil {
		t.Fatal("the held failure is counted again after a rate limit")
	}
	st = ProbeResult(cfg, StartProbe(st, CardRef{ID: "c9"}), false, t0)
	if st.Fingerprint != fp {
		t.Fatalf("a probe failing for a profile-level kind dropped the hold: %+v", st)
	}
}
