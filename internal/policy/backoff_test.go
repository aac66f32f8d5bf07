package policy

import (
	"strings"
	"testing"
	"time"
)

func durs(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = FormatDuration(d)
	}
	return strings.Join(s, " ")
}

func TestScheduleDefaults(t *testing.T) {
	cfg := Defaults()
	cases := []struct {
		k     Kind
		count int
		want  string
	}{
		{KindAgentFailed, 9, "10s 20s 40s 1m20s 2m40s 5m 5m 5m 5m"},
		{KindUnknown, 3, "10s 20s 40s"},
		{KindNetwork, 4, "1m 5m 15m 15m"},
		{KindInterrupted, 3, "now now now"},
		{KindWorkspaceSetup, 3, "10s 20s 40s"},
		{KindProviderUnavailable, 10, "10s 20s 40s 1m20s 2m40s 5m 5m 5m 5m 5m"},
		{KindRateLimited, 5, "10s 20s 40s 1m20s 2m40s"},
	}
	for _, c := range cases {
		if got := durs(Schedule(cfg, c.k, c.count)); got != c.want {
			t.Errorf("Schedule(%s, %d) = %q, want %q", c.k, c.count, got, c.want)
		}
	}
}

func TestScheduleOverrides(t *testing.T) {
	cfg := Defaults()
	cfg.Kinds[KindAgentFailed] = KindPolicy{Tiers: []time.Duration{time.Second, 2 * time.Second}}
	cfg.Kinds[KindNetwork] = KindPolicy{Backoff: &Backoff{Base: time.Second, Max: 3 * time.Second}}
	if got := durs(Schedule(cfg, KindAgentFailed, 3)); got != "1s 2s 2s" {
		t.Errorf("tiers override: %q", got)
	}
	if got := durs(Schedule(cfg, KindNetwork, 4)); got != "1s 2s 3s 3s" {
		t.Errorf("backoff override beats built-in tiers: %q", got)
	}
}

func TestDelayJitterBounded(t *testing.T) {
	cfg := Defaults()
	for n := 1; n <= 12; n++ {
		base := Delay(cfg, KindAgentFailed, n, nil)
		for _, r := range []float64{0, 0.25, 0.5, 0.999} {
			d := Delay(cfg, KindAgentFailed, n, func() float64 { return r })
			if d > cfg.Backoff.Max {
				t.Fatalf("n=%d r=%g: %s exceeds max", n, r, d)
			}
			lo := time.Duration(float64(base) * (1 - cfg.Backoff.Jitter))
			hi := base // jitter is taken off, never added
			if d < lo || d > hi {
				t.Fatalf("n=%d r=%g: %s outside [%s, %s]", n, r, d, lo, hi)
			}
		}
	}
	if d := Delay(cfg, KindAgentFailed, 1, func() float64 { return 0.5 }); d != 9500*time.Millisecond {
		t.Errorf("10s with jitter 0.1 and r=0.5: %s", d)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "now", 10 * time.Second: "10s", 80 * time.Second: "1m20s",
		5 * time.Minute: "5m", 90 * time.Minute: "1h30m", 2 * time.Hour: "2h", 250 * time.Millisecond: "250ms"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
