package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/drover-dev/drover/config"
	"github.com/drover-dev/drover/dispatch"
	"github.com/drover-dev/drover/notify"
	"github.com/drover-dev/drover/store"
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
	return "http://" + cfg.Server.Host + ":" + itoa(cfg.Server.Port) + "/cards/" + ident
}

func (a *app) metrics() dispatch.Metrics { return nil }

// startSurfaces starts the notification worker (and the HTTP server).
func (a *app) startSurfaces(ctx context.Context, d *dispatch.Dispatcher, log *slog.Logger) (func(), error) {
	if err := notify.CheckConfig(d.Config().Notify); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &notify.Worker{Store: a.st, Config: func() config.Notify { return d.Config().Notify }, Log: log, Node: d.Node()}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(wctx, 2*time.Second) }()
	return func() { cancel(); <-done }, nil
}
