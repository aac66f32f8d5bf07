package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/metrics"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/reload"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/tracing"
)

func (a *app) serveCmd() *cobra.Command {
	var logFormat, logLevel string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the dispatcher (and the dashboard and API when server.port is set)",
		Long: `Run the dispatcher: claim eligible cards, run their agents in workspaces, route
every outcome, and serve the dashboard and HTTP API when server.port is set.
SIGTERM or Ctrl-C stops the agents, records their runs as interrupted and
returns the cards to the eligible column.

Logs go to stderr. Under systemd (stderr connected to the journal) they are
one line per record without a timestamp and with the record's priority
(--log-format journal); elsewhere slog's text form (--log-format text) or
JSON (--log-format json). DROVER_LOG_FORMAT sets the format when the flag is
not given.

Traces: with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
set, each run attempt is exported as an OpenTelemetry trace over OTLP;
OTEL_SDK_DISABLED=true turns that off. See docs/guides/traces.md.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if _, err := os.Stat(a.configPath); errors.Is(err, os.ErrNotExist) {
				return usagef("no %s here; run drover init first (or pass --config PATH)", a.configPath)
			}
			format, err := resolveLogFormat(logFormat, c.Flags().Changed("log-format"), a.errw)
			if err != nil {
				return err
			}
			log, err := newLogger(a.errw, format, logLevel)
			if err != nil {
				return err
			}
			// Everything that can be refused is refused before the store
			// is created.
			if err := a.loadBoard(); err != nil {
				return err
			}
			if err := validateForServe(a.cfg.Full); err != nil {
				return err
			}
			if err := a.openWaiting(c.Context(), log); err != nil {
				return err
			}
			for _, w := range a.cfg.Full.Warnings {
				log.Warn("config: " + w)
			}
			shutdownTraces, err := tracing.Setup(c.Context(), log)
			if err != nil {
				return usagef("%v", err)
			}
			defer func() {
				// Flush the spans of the runs the stop just routed.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := shutdownTraces(ctx); err != nil {
					log.Warn("traces: could not flush the last spans", "err", err)
				}
			}()
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.runServer(ctx, a.cfg.Full, log, nil)
		},
	}
	c.Flags().StringVar(&logFormat, "log-format", logAuto, "log format: auto (journal under systemd, else text), text, json or journal (env "+logFormatEnv+")")
	c.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return c
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %q is not debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "journal":
		return slog.New(newJournalHandler(w, opts)), nil
	}
	return nil, usagef("--log-format: %q is not text, json or journal", format)
}

// validateForServe refuses configs that could only fail at run time.
func validateForServe(cfg *config.Config) error {
	if err := cfg.Tracker.Ready(); err != nil {
		return fmt.Errorf("%w: %v", errConfig, err)
	}
	if cfg.Tracker.External() {
		for _, r := range []board.Role{board.RoleEligible, board.RoleBlocked, board.RoleCancelled} {
			if _, ok := cfg.Board.First(r); !ok {
				return fmt.Errorf("%w: board.columns: no column has role %s; a tracker's issues need one", errConfig, r)
			}
		}
	}
	if _, ok := cfg.Board.First(board.RoleRunning); !ok {
		return fmt.Errorf("%w: board.columns: no column has role running", errConfig)
	}
	if s := cfg.Server; s.Port != 0 && s.AuthToken == "" && s.Host != "" && !server.IsLoopback(s.Host) {
		return fmt.Errorf("%w: %v", errConfig, server.ErrNoToken)
	}
	return nil
}

// runServer runs the dispatcher (and the surfaces around it) until ctx ends.
// ready, when not nil, is called once the dispatcher exists.
func (a *app) runServer(ctx context.Context, cfg *config.Config, log *slog.Logger, ready func(*dispatch.Dispatcher)) error {
	err := validateForServe(cfg)
	if err != nil {
		return err
	}
	var watcher *reload.Watcher
	if cfg.Path != "" {
		watcher = reload.NewWatcher(cfg.Path, cfg)
		// An edit is held to what serve checks at start, not only to what
		// parses.
		started := cfg.Tracker
		watcher.Validate = func(c *config.Config) error {
			if err := validateForServe(c); err != nil {
				return err
			}
			if !reflect.DeepEqual(c.Tracker, started) {
				log.Warn("config reload: the tracker section changed; the tracker keeps its start-up settings until drover serve restarts")
			}
			return notify.CheckConfig(c.Notify)
		}
	}
	var d *dispatch.Dispatcher
	m := metrics.New(a.st, func() *config.Config {
		if d != nil {
			return d.Config()
		}
		return cfg
	}, log)
	d, err = dispatch.New(dispatch.Options{
		Store: a.st, Config: cfg, Watcher: watcher, Log: log,
		LogDir: filepath.Join(a.configDir(), ".drover", "logs"),
		GitDir: filepath.Join(a.configDir(), ".drover", "git"),
		// Agents get no store: their run's capability (a socket of the
		// run's own under .drover/agent) is all drover mcp and drover run
		// need.
		AgentSockets: filepath.Join(a.configDir(), ".drover", "agent"),
		Outbox:       outboxFor, Metrics: m, MCPCommand: mcpCommand(),
	})
	if err != nil {
		return err
	}
	if ready != nil {
		ready(d)
	}
	t, err := newTracker(cfg.Tracker)
	if err != nil {
		return fmt.Errorf("%w: %v", errConfig, err)
	}
	if t != nil {
		if w := unlabelledWarning(cfg.Tracker); w != "" {
			log.Warn(w)
		}
		if err := checkTracker(ctx, t, log); err != nil {
			return err
		}
		r := a.trackerRunner(t, d, log)
		r.Start()
		a.trackerWake = r.Wake
		rctx, cancel := context.WithCancel(ctx)
		rdone := make(chan struct{})
		go func() { defer close(rdone); r.Run(rctx) }()
		defer func() { cancel(); <-rdone }()
	}
	stopPulls, err := a.startPulls(ctx, cfg, d, log)
	if err != nil {
		return err
	}
	defer stopPulls()
	stopSurfaces, err := a.startSurfaces(ctx, d, m, log)
	if err != nil {
		return err
	}
	defer stopSurfaces()
	// Run returns at once when it cannot record the node; a busy store is
	// waited out like at open.
	return waitBusy(ctx, log, "register node", func() error { return d.Run(ctx) })
}
