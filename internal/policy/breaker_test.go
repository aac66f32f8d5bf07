package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBreakerOpensHalfOpensCloses(t *testing.T) {
	cfg := Defaults()
	var st BreakerState
	if ok, probe, _ := Allow(st, t0); !ok || probe {
		t.Fatal("zero breaker is closed")
	}
	var changed bool
	for i := 0; i < 4; i++ {
		st, changed = Observe(cfg, st, KindProviderUnavailable, CardRef{ID: fmt.Sprintf("c%d", i)}, t0.Add(time.Duration(i)*time.Second), time.Time{})
		if changed || st.state() != BreakerClosed {
			t.Fatalf("hit %d opened it: %+v", i+1, st)
		}
	}
	// Other kinds are not profile-level.
	st, changed = Observe(cfg, st, KindAgentFailed, CardRef{ID: "c9"}, t0.Add(5*time.Second), time.Time{})
	if changed || len(st.Hits) != 4 {
		t.Fatalf("agent_failed is not a hit: %+v", st)
	}
	st, changed = Observe(cfg, st, KindRateLimited, CardRef{ID: "c4"}, t0.Add(10*time.Second), time.Time{})
	if !changed || st.State != BreakerOpen || !st.Until.Equal(t0.Add(70*time.Second)) {
		t.Fatalf("fifth hit opens until cooldown: %+v", st)
	}
	// A straggler with a later reset pushes Until.
	st, changed = Observe(cfg, st, KindRateLimited, CardRef{ID: "c5"}, t0.Add(11*time.Second), t0.Add(2*time.Minute))
	if !changed || !st.Until.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("later reset: %+v", st)
	}
	if ok, _, why := Allow(st, t0.Add(time.Minute)); ok || why == "" {
		t.Fatal("open breaker dispatches nothing")
	}
	ok, probe, _ := Allow(st, t0.Add(2*time.Minute))
	if !ok || !probe {
		t.Fatal("after Until one probe is allowed")
	}
	st = StartProbe(st, CardRef{ID: "p1", Identifier: "DRV-7"})
	if ok, _, why := Allow(st, t0.Add(2*time.Minute)); ok {
		t.Fatal("half-open allows exactly one probe")
	} else if !strings.Contains(why, "probe card DRV-7") || strings.Contains(why, "p1") {
		t.Fatalf("half-open names the probe by its identifier, not its id: %q", why)
	}
	// A state stored before identifiers were kept still names the card.
	if _, _, why := Allow(BreakerState{State: BreakerHalfOpen, ProbeCardID: "p1"}, t0); !strings.Contains(why, "p1") {
		t.Fatalf("old half-open state: %q", why)
	}
	// The probe's success (any non-profile outcome) closes it.
	st, changed = Observe(cfg, st, KindSucceeded, CardRef{ID: "p1"}, t0.Add(3*time.Minute), time.Time{})
	if !changed || st.State != BreakerClosed || len(st.Hits) != 0 {
		t.Fatalf("probe success closes: %+v", st)
	}
}

func TestBreakerWindowAndProbeFailure(t *testing.T) {
	cfg := Defaults()
	var st BreakerState
	for i := 0; i < 10; i++ { // one hit a minute-and-a-half: never 5 within 5m
		st, _ = Observe(cfg, st, KindProviderUnavailable, CardRef{ID: "c"}, t0.Add(time.Duration(i)*90*time.Second), time.Time{})
		if st.state() != BreakerClosed {
			t.Fatalf("hit %d: hits outside the window must not count: %+v", i, st)
		}
	}
	st = BreakerState{State: BreakerOpen, Kind: KindProviderUnavailable, Until: &t0}
	st = StartProbe(st, CardRef{ID: "p", Identifier: "DRV-2"})
	st2, changed := Observe(cfg, st, KindProviderUnavailable, CardRef{ID: "p"}, t0.Add(time.Second), time.Time{})
	if !changed || st2.State != BreakerOpen || !st2.Until.Equal(t0.Add(61*time.Second)) || st2.ProbeCardID != "" || st2.ProbeCard != "" {
		t.Fatalf("probe failure re-opens: %+v", st2)
	}
	st3 := ProbeResult(cfg, st, false, t0)
	if st3.State != BreakerOpen || !st3.Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("ProbeResult(false): %+v", st3)
	}
	if ProbeResult(cfg, st, true, t0).State != BreakerClosed {
		t.Fatal("ProbeResult(true) closes")
	}
	if r := ReleaseProbe(st); r.ProbeCardID != "" || r.ProbeCard != "" || r.State != BreakerHalfOpen {
		t.Fatalf("ReleaseProbe: %+v", r)
	}
}

func TestBreakerUsageLimitOpensAtOnce(t *testing.T) {
	reset := t0.Add(3 * time.Hour)
	st, changed := Observe(Defaults(), BreakerState{}, KindUsageLimited, CardRef{ID: "c1"}, t0, reset)
	if !changed || st.State != BreakerOpen || !st.Until.Equal(reset) {
		t.Fatalf("%+v", st)
	}
}

// A rate limit or an outage whose server states a wait of the breaker's
// window or more opens the breaker at once until then, naming the wait; a
// shorter stated wait is one hit of the threshold.
func TestBreakerALongStatedWaitOpensAtOnce(t *testing.T) {
	cfg := Defaults() // window 5m, threshold 5
	for _, k := range []Kind{KindRateLimited, KindProviderUnavailable} {
		st, changed := Observe(cfg, BreakerState{}, k, CardRef{ID: "c1", Identifier: "DRV-1"}, t0, t0.Add(2*time.Hour))
		if !changed || st.State != BreakerOpen || !st.Until.Equal(t0.Add(2*time.Hour)) || st.Kind != k {
			t.Errorf("%s with a two-hour wait: %+v; want open until the wait's end", k, st)
		}
		if want := "the provider asks to wait 2h, at least the breaker's window of 5m"; !strings.Contains(st.Reason, want) {
			t.Errorf("%s: reason %q; want %q", k, st.Reason, want)
		}
		st, changed = Observe(cfg, BreakerState{}, k, CardRef{ID: "c1"}, t0, t0.Add(4*time.Minute))
		if changed || st.state() != BreakerClosed || len(st.Hits) != 1 {
			t.Errorf("%s with a four-minute wait: %+v, changed %v; want one hit, closed", k, st, changed)
		}
	}
}

// A stated wait beyond MaxStatedHold holds the profile that long, then a
// probe card; a long wait that comes while the breaker is open, or to its
// probe, pushes the end out and says so; a hold's reason stays.
func TestBreakerALongStatedWaitIsBoundedAndSaid(t *testing.T) {
	cfg := Defaults()
	card := CardRef{ID: "c2", Identifier: "DRV-2"}
	st, _ := Observe(cfg, BreakerState{}, KindProviderUnavailable, card, t0, t0.Add(24*time.Hour))
	if !st.Until.Equal(t0.Add(MaxStatedHold)) || !strings.Contains(st.Reason, "wait 24h") || !strings.Contains(st.Reason, "one probe card runs at") {
		t.Errorf("a day's wait: until %v, reason %q; want held %s, then a probe, both said", st.Until, st.Reason, MaxStatedHold)
	}
	open := BreakerState{State: BreakerOpen, Kind: KindRateLimited, Reason: "5 profile-level failures within 5m", Since: &t0, Until: ptr(t0.Add(time.Minute))}
	st, changed := Observe(cfg, open, KindRateLimited, card, t0, t0.Add(2*time.Hour))
	if !changed || !st.Until.Equal(t0.Add(2*time.Hour)) || !strings.Contains(st.Reason, "wait 2h") {
		t.Errorf("while open: %+v, changed %v; want the end pushed and the wait said", st, changed)
	}
	held := open
	held.Fingerprint, held.Reason = "f1", "the same failure on 3 cards"
	if st, _ := Observe(cfg, held, KindRateLimited, card, t0, t0.Add(2*time.Hour)); st.Reason != held.Reason || st.Fingerprint != "f1" {
		t.Errorf("a hold: reason %q; want the hold's", st.Reason)
	}
	half := BreakerState{State: BreakerHalfOpen, Kind: KindRateLimited, ProbeCardID: "c2"}
	if st, _ := Observe(cfg, half, KindRateLimited, card, t0, t0.Add(2*time.Hour)); st.State != BreakerOpen || !strings.Contains(st.Reason, "wait 2h") || !strings.Contains(st.Reason, "the probe met it") {
		t.Errorf("the probe: %+v; want open again, the wait said", st)
	}
}

func TestBreakerPausedUntilOperator(t *testing.T) {
	cfg := Defaults()
	cfg.QuotaProbe = 0 // quota_exhausted pauses only with its probe off
	for _, k := range []Kind{KindAuthFailed, KindQuotaExhausted, KindConfigError} {
		st, changed := Observe(cfg, BreakerState{}, k, CardRef{ID: "c1"}, t0, time.Time{})
		if !changed || st.State != BreakerPaused || st.Until != nil || st.Kind != k {
			t.Fatalf("%s: %+v", k, st)
		}
		// A second card failing the same way changes nothing: one notification.
		for _, k2 := range []Kind{k, KindProviderUnavailable, KindSucceeded} {
			if _, changed := Observe(cfg, st, k2, CardRef{ID: "c2"}, t0.Add(time.Second), time.Time{}); changed {
				t.Fatalf("%s then %s changed a paused breaker", k, k2)
			}
		}
		if ok, _, _ := Allow(st, t0.Add(100*time.Hour)); ok {
			t.Fatal("paused never lets time through")
		}
		if ProbeResult(cfg, st, true, t0).State != BreakerPaused {
			t.Fatal("a probe does not resume a paused profile")
		}
		if st = ResumeByOperator(st); st.State != BreakerClosed {
			t.Fatal("operator resume closes")
		}
	}
	// An auth failure while open pauses (it needs an operator, time will not do).
	open := BreakerState{State: BreakerOpen, Until: &t0}
	if st, changed := Observe(cfg, open, KindAuthFailed, CardRef{ID: "c"}, t0, time.Time{}); !changed || st.State != BreakerPaused {
		t.Fatalf("%+v", st)
	}
}

func TestBreakerCreditProbes(t *testing.T) {
	cfg := Defaults()
	st, changed := Observe(cfg, BreakerState{}, KindQuotaExhausted, CardRef{ID: "c1", Identifier: "DRV-1"}, t0, time.Time{})
	if !changed || st.State != BreakerOpen || st.Until == nil || !st.Until.Equal(t0.Add(30*time.Minute)) || st.Kind != KindQuotaExhausted {
		t.Fatalf("credit spent holds the profile until the first probe: %+v", st)
	}
	// Other live runs finding the credit gone change nothing (one notice).
	if _, changed := Observe(cfg, st, KindQuotaExhausted, CardRef{ID: "c2"}, t0.Add(time.Second), time.Time{}); changed {
		t.Fatal("a second card's quota failure moved the probe")
	}
	if ok, probe, _ := Allow(st, t0.Add(29*time.Minute)); ok || probe {
		t.Fatal("no run before the probe time")
	}
	if ok, probe, _ := Allow(st, t0.Add(30*time.Minute)); !ok || !probe {
		t.Fatal("one probe at the probe time")
	}
	// Failed probes double the wait, up to MaxQuotaProbe.
	now := t0.Add(30 * time.Minute)
	var waits []time.Duration
	for range 6 {
		st = StartProbe(st, CardRef{ID: "c3", Identifier: "DRV-3"})
		st = CreditProbeFailed(cfg, st, CardRef{ID: "c3", Identifier: "DRV-3"}, now)
		waits = append(waits, st.Until.Sub(now))
		if st.State != BreakerOpen || !strings.Contains(st.Reason, "DRV-3") {
			t.Fatalf("failed probe: %+v", st)
		}
		now = *st.Until
	}
	want := []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour}
	if !slices.Equal(waits, want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	// A probe that runs ends the hold (ProbeResult on a success).
	if ProbeResult(cfg, StartProbe(st, CardRef{ID: "c3"}), true, now).State != BreakerClosed {
		t.Fatal("a probe that ran closes the breaker")
	}
}
