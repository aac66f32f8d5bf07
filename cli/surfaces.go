package cli

import (
	"context"
	"log/slog"

	"github.com/drover-dev/drover/config"
	"github.com/drover-dev/drover/dispatch"
	"github.com/drover-dev/drover/store"
)

// outboxFor turns a dispatcher notice into outbox rows (notifications).
func outboxFor(cfg *config.Config, n dispatch.Notice) []store.OutboxItem { return nil }

func (a *app) metrics() dispatch.Metrics { return nil }

// startSurfaces starts the HTTP server and the notification worker.
func (a *app) startSurfaces(ctx context.Context, d *dispatch.Dispatcher, log *slog.Logger) (func(), error) {
	return func() {}, nil
}
