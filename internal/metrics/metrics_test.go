package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/metrics"
	"github.com/drover-dev/drover/internal/status/statustest"
)

// TestExposition scrapes the registry after a scripted scenario and parses
// the exposition format.
func TestExposition(t *testing.T) {
	st, cfg := statustest.Open(t)
	statustest.Seed(t, st, cfg, time.Now().UTC())
	m := metrics.New(st, func() *config.Config { return cfg }, nil)
	m.ObserveRun(board.Run{Outcome: board.OutcomeFailed, Kind: "agent_failed"})
	m.ObserveRun(board.Run{Outcome: board.OutcomeFailed, Kind: "agent_failed"})
	m.ObserveRun(board.Run{Outcome: board.OutcomeSucceeded})
	m.ObserveStart("sim", 1500*time.Millisecond)
	m.ObserveTick(20 * time.Millisecond)

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	val := func(name string, labels map[string]string) float64 {
		t.Helper()
		f, ok := fams[name]
		if !ok {
			t.Fatalf("no series %s", name)
		}
	next:
		for _, mt := range f.Metric {
			for _, lp := range mt.Label {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			switch {
			case mt.Counter != nil:
				return mt.Counter.GetValue()
			case mt.Gauge != nil:
				return mt.Gauge.GetValue()
			case mt.Histogram != nil:
				return float64(mt.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"drover_runs_total", map[string]string{"outcome": "failed", "kind": "agent_failed"}, 2},
		{"drover_runs_total", map[string]string{"outcome": "succeeded", "kind": ""}, 1},
		{"drover_attempts_total", map[string]string{"agent": "sim"}, 1},
		{"drover_dispatch_latency_seconds", nil, 1},
		{"drover_tick_duration_seconds", nil, 1},
		{"drover_cards", map[string]string{"column": "ready"}, 2},
		{"drover_cards", map[string]string{"column": "blocked"}, 1},
		{"drover_running_runs", nil, 1},
		{"drover_retry_queue_depth", nil, 1},
		{"drover_agent_breaker_state", map[string]string{"agent": "script", "state": "paused"}, 1},
		{"drover_agent_breaker_state", map[string]string{"agent": "sim", "state": "closed"}, 1},
		{"drover_spend_day_cap_usd", nil, 10},
		{"drover_outbox_backlog", map[string]string{"channel": "slack"}, 1},
		{"drover_store_up", nil, 1},
	}
	for _, c := range checks {
		if got := val(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if s := val("drover_spend_today_usd", nil); s < 0.52-1e-9 {
		t.Errorf("spend today %v", s)
	}
}
