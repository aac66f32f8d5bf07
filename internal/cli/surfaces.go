package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/metrics"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/retention"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/store"
)

// outboxFor turns a dispatcher notice into outbox rows (notifications).
func outboxFor(cfg *config.Config, n dispatch.Notice) []store.OutboxItem {
	m := notify.Message{Event: n.Event, Key: n.Key, At: n.At, Reason: n.Reason, GaveUp: n.GaveUp, Agent: n.Profile, Question: n.Question, Text: n.Text}
	if n.Card.ID != "" {
		m.Card = notify.CardOf(n.Card, cardURL(cfg, n.Card.Identifier))
	}
	if n.Run != nil {
		m.Run = notify.RunOf(*n.Run)
	}
	return notify.Enqueue(cfg.Notify, m)
}

func cardURL(cfg *config.Config, ident string) string {
	if cfg.Server.Port == 0 {
		return ""
	}
	return "http://" + net.JoinHostPort(cfg.Server.Host, strconv.Itoa(cfg.Server.Port)) + "/cards/" + ident
}

// startSurfaces starts the notification worker and, when server.port is
// set, the dashboard and HTTP API. It returns once the server listens.
func (a *app) startSurfaces(ctx context.Context, d *dispatch.Dispatcher, m *metrics.Metrics, log *slog.Logger) (func(), error) {
	if err := notify.CheckConfig(d.Config().Notify); err != nil {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &notify.Worker{Store: a.st, Config: func() notify.Config { return d.Config().Notify }, Log: log, Node: d.Node(), LeaderTTL: d.LeaderTTL()}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(wctx, 2*time.Second) }()
	if p, ok := a.st.(store.Pruner); ok { // retention, on the leader, in small batches
		rw := &retention.Worker{Store: p, Config: func() config.Retention { return d.Config().Retention }, Log: log,
			Lead: func(ctx context.Context) (bool, error) { return a.st.TryLead(ctx, d.Node(), d.LeaderTTL()) }}
		rdone, ndone := make(chan struct{}), done
		go func() { defer close(rdone); rw.Run(wctx) }()
		done = make(chan struct{})
		go func() { <-ndone; <-rdone; close(done) }()
	}
	stop := func() { cancel(); <-done }

	cfg := d.Config()
	if cfg.Server.Port == 0 {
		return stop, nil
	}
	ready := make(chan string, 1)
	var wh *server.Webhook
	if cfg.Tracker.External() && a.trackerWake != nil {
		wh = &server.Webhook{Kind: cfg.Tracker.Kind, Secret: func() string { return d.Config().Tracker.WebhookSecret }, Wake: a.trackerWake}
	}
	srv := server.New(server.Options{
		Webhook: wh, PullWebhook: a.pullWebhook(d),
		Store: a.st, Config: d.Config, Refresh: d.Refresh, Registry: m.Registry, Log: log,
		Explain: func(ctx context.Context, ref string) (any, error) {
			return dispatch.Explain(ctx, a.st, d.Config(), ref, time.Now())
		},
		Ready: func(addr string) { ready <- addr },
	})
	errc := make(chan error, 1)
	sdone := make(chan struct{})
	go func() { defer close(sdone); errc <- srv.ListenAndServe(wctx, cfg.Server.Host, cfg.Server.Port) }()
	select {
	case addr := <-ready:
		a.dashboard = "http://" + addr + "/"
		if a.announce != nil {
			a.announce(a.dashboard)
		}
		return func() { cancel(); <-done; <-sdone }, nil
	case err := <-errc:
		stop()
		return nil, err
	}
}
