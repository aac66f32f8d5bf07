// Package metrics is drover's Prometheus registry. Two halves:
//
//   - gauges read from the store at scrape time by a collector (so every
//     process serving /metrics reports the shared board truthfully): cards by
//     column, running runs, retry queue depth, breaker states, spend today,
//     outbox backlog;
//   - drover_build_info: 1, labelled with the build (version, commit,
//     goversion, schema);
//   - counters and histograms the dispatcher feeds as things happen: runs by
//     outcome and kind, attempts, dispatch latency (eligible → agent
//     started) and tick duration.
//
// All series are prefixed drover_.
package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/version"
)

// Metrics holds the registry and the series the dispatcher feeds.
type Metrics struct {
	Registry *prometheus.Registry
	// Runs counts routed runs by outcome and failure kind ("" for none).
	Runs *prometheus.CounterVec
	// Attempts counts attempts started, by agent profile.
	Attempts *prometheus.CounterVec
	// DispatchLatency is seconds from a card becoming eligible (or due) to its
	// agent starting.
	DispatchLatency prometheus.Histogram
	// TickDuration is seconds per dispatcher tick.
	TickDuration prometheus.Histogram
}

// New builds the registry with the process and Go collectors, the store
// collector (when st is non-nil) and the dispatcher's series. cfg returns the
// current config (may be nil).
func New(st store.Store, cfg func() *config.Config, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{Registry: prometheus.NewRegistry(),
		Runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_runs_total",
			Help: "Routed runs by outcome and failure kind."}, []string{"outcome", "kind"}),
		Attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_attempts_total",
			Help: "Attempts started, by agent profile."}, []string{"agent"}),
		DispatchLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_dispatch_latency_seconds",
			Help: "Seconds from a card becoming eligible or due to its agent starting.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 14)}),
		TickDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_tick_duration_seconds",
			Help: "Seconds per dispatcher tick.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
	}
	m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Runs, m.Attempts, m.DispatchLatency, m.TickDuration, buildInfo(version.Get()))
	if st != nil {
		m.Registry.MustRegister(&storeCollector{st: st, cfg: cfg, log: log})
	}
	return m
}

// buildInfo is drover_build_info, 1 with the build in its labels.
func buildInfo(in version.Info) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "drover_build_info",
		Help: "Always 1; the labels say which drover build serves (drover version).",
		ConstLabels: prometheus.Labels{"version": in.Version, "commit": in.Commit, "goversion": in.GoVersion,
			"schema": strconv.FormatInt(in.Schema, 10)}})
	g.Set(1)
	return g
}

// ObserveRun counts a routed run.
func (m *Metrics) ObserveRun(r board.Run) { m.Runs.WithLabelValues(string(r.Outcome), r.Kind).Inc() }

// ObserveStart counts an attempt that started, with its dispatch latency.
func (m *Metrics) ObserveStart(agent string, latency time.Duration) {
	m.Attempts.WithLabelValues(agent).Inc()
	m.DispatchLatency.Observe(latency.Seconds())
}

// ObserveTick records one dispatcher tick.
func (m *Metrics) ObserveTick(d time.Duration) { m.TickDuration.Observe(d.Seconds()) }

var (
	descCards    = prometheus.NewDesc("drover_cards", "Cards by board column.", []string{"column", "role"}, nil)
	descRunning  = prometheus.NewDesc("drover_running_runs", "Runs in flight.", nil, nil)
	descQueue    = prometheus.NewDesc("drover_retry_queue_depth", "Cards waiting for a scheduled retry.", nil, nil)
	descBreaker  = prometheus.NewDesc("drover_agent_breaker_state", "1 for each agent profile's current breaker state.", []string{"agent", "state"}, nil)
	descSpend    = prometheus.NewDesc("drover_spend_today_usd", "Spend since the day boundary, in-flight runs included.", nil, nil)
	descSpendCap = prometheus.NewDesc("drover_spend_day_cap_usd", "limits.max_cost_per_day_usd (0 = off).", nil, nil)
	descOutbox   = prometheus.NewDesc("drover_outbox_backlog", "Undelivered notifications by channel.", []string{"channel"}, nil)
	descUp       = prometheus.NewDesc("drover_store_up", "1 when the store answered the last scrape.", nil, nil)
)

// storeCollector reads the board's gauges from the store at scrape time.
type storeCollector struct {
	st  store.Store
	cfg func() *config.Config
	log *slog.Logger
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCards, descRunning, descQueue, descBreaker, descSpend, descSpendCap, descOutbox, descUp} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var cfg *config.Config
	if c.cfg != nil {
		cfg = c.cfg()
	}
	s, err := status.Snapshot(ctx, c.st, cfg, time.Now())
	if err != nil {
		c.log.Warn("metrics: store snapshot failed", "err", err)
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1)
	for _, col := range s.Columns {
		ch <- prometheus.MustNewConstMetric(descCards, prometheus.GaugeValue, float64(col.Count), col.Name, string(col.Role))
	}
	ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, float64(len(s.Running)))
	ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(len(s.Retrying)))
	for _, a := range s.Agents {
		for _, st := range []string{"closed", "open", "half_open", "paused"} {
			v := 0.0
			if a.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, v, a.Name, st)
		}
	}
	ch <- prometheus.MustNewConstMetric(descSpend, prometheus.GaugeValue, s.Spend.TodayUSD)
	ch <- prometheus.MustNewConstMetric(descSpendCap, prometheus.GaugeValue, s.Spend.DayCapUSD)
	items, err := c.st.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(true), Limit: 100000})
	if err == nil {
		by := map[string]int{}
		for _, it := range items {
			by[it.Channel]++
		}
		for chn, n := range by {
			ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(n), chn)
		}
	}
}
