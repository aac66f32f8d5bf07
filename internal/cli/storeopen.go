package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/excerpt"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// storeUse is what a command does with the store; it decides whether the
// command may create one. A store is made by init, serve and demo; inside a
// board (a WORKFLOW.md exists) a write command makes the board's own store
// too; a read command never creates a file or a directory.
type storeUse int

const (
	readsStore  storeUse = iota // the store must exist
	writesStore                 // creates the store only beside a WORKFLOW.md
	makesStore                  // init, serve, demo
)

// open loads the config and opens the store for use.
func (a *app) open(ctx context.Context, use storeUse) error {
	if a.st != nil {
		return nil
	}
	if err := a.loadBoard(); err != nil {
		return err
	}
	if err := a.storeMayOpen(use); err != nil {
		return err
	}
	st, err := sqlstore.Open(ctx, a.dsn())
	if err != nil {
		return err
	}
	a.st = st
	return nil
}

// loadBoard loads WORKFLOW.md (a.cfg) and refuses to go on outside a board:
// without a WORKFLOW.md and without a store named by --store or
// DROVER_STORE there is nothing to read or change.
func (a *app) loadBoard() error {
	if a.cfg != nil {
		return nil // loaded already (by loadBestEffort, say)
	}
	cfg, err := loadConfig(a.configPath)
	if err != nil {
		return err
	}
	a.cfg = cfg
	if cfg.Full == nil && a.storeDSN == "" && os.Getenv("DROVER_STORE") == "" {
		return usagef("no board here: %s does not exist; run drover in the board's directory, pass --config PATH/TO/WORKFLOW.md (or --store DSN), or create a board with drover init", a.configPath)
	}
	return nil
}

// loadBestEffort loads WORKFLOW.md like loadBoard, except that a file whose
// keys are refused still gives a config (those keys at their defaults); the
// refusal is returned for the caller to show. A file that is not YAML, or
// is missing outside a board, is an error as in loadBoard.
func (a *app) loadBestEffort() (refused error, err error) {
	if err := a.loadBoard(); err == nil || !errors.Is(err, errConfig) {
		return nil, err
	}
	cfg, perr := config.LoadBestEffort(a.configPath)
	if cfg == nil {
		return nil, fmt.Errorf("%w: %v", errConfig, perr)
	}
	a.cfg = loadedFrom(cfg)
	return perr, nil
}

// readBestEffort is open(readsStore) for a read command with a WORKFLOW.md
// that may be refused: the refusal is a warning on stderr and a.refused,
// and the board is read with the file's valid keys. What the refused file
// would decide (attempt limits, budgets) is not shown as the board's: a
// running serve keeps its last good config, which this command cannot see.
func (a *app) readBestEffort(ctx context.Context) error {
	refused, err := a.loadBestEffort()
	if err != nil {
		return err
	}
	if refused != nil && a.refused == nil {
		a.refused = refused
		msg := fmt.Sprintf("%s is invalid, read anyway: %s; limits it sets are shown as unknown (a running serve keeps its last good config)",
			a.configPath, excerpt.Flatten(refused.Error()))
		if a.asJSON {
			b, _ := json.Marshal(map[string]any{"warning": map[string]string{"code": "invalid_config", "message": msg}})
			fmt.Fprintln(a.errw, string(b))
		} else {
			fmt.Fprintln(a.errw, "drover: warning: "+excerpt.Terminal(msg))
		}
	}
	return a.open(ctx, readsStore)
}

// storeMayOpen refuses to open a SQLite store that does not exist when use
// may not create it, before anything is written.
func (a *app) storeMayOpen(use storeUse) error {
	if use == makesStore || (use == writesStore && a.cfg.Full != nil) {
		return nil
	}
	path, ok := strings.CutPrefix(a.dsn(), "sqlite:")
	if !ok || strings.Contains(path, ":memory:") {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return usagef("no store at %s (nothing was created): drover init or drover serve creates a board's store beside its WORKFLOW.md; check --config, --store, DROVER_STORE and the store key", path)
	}
	return nil
}

// reading wraps a read command's run: the config is loaded and an existing
// store opened (a.cfg and a.st set) before run starts; nothing is created.
// A WORKFLOW.md whose keys are refused does not hide the board: the command
// reads it all the same, after one warning on stderr naming the refusal
// (a.refused says so, for what the config decides: see readBestEffort).
func (a *app) reading(run func(c *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := a.readBestEffort(c.Context()); err != nil {
			return err
		}
		return run(c, args)
	}
}

// withStore wraps a command that changes the board: like reading, except
// that inside a board the store is created when it does not exist yet.
func (a *app) withStore(run func(c *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := a.open(c.Context(), writesStore); err != nil {
			return err
		}
		return run(c, args)
	}
}

// busyWait bounds how long serve waits out a busy store at start.
const busyWait = time.Minute

// waitBusy calls try until it succeeds, fails for another reason than a
// busy SQLite store, or busyWait has passed; between tries it logs the wait
// and backs off (250ms doubling up to 5s). Another process holding the
// write lock longer than SQLite's busy timeout (a migration, a bulk write, a
// loaded machine) is a reason to wait, not to give up.
func waitBusy(ctx context.Context, log *slog.Logger, what string, try func() error) error {
	deadline := time.Now().Add(busyWait)
	pause := 250 * time.Millisecond
	for n := 1; ; n++ {
		err := try()
		if err == nil || !sqlstore.IsBusy(err) || !time.Now().Before(deadline) || ctx.Err() != nil {
			if err != nil && sqlstore.IsBusy(err) {
				return fmt.Errorf("%w (still busy after waiting %s; find the process holding the store's write lock)", err, busyWait)
			}
			return err
		}
		log.Warn("store busy: another process holds its write lock; waiting", "step", what, "try", n, "retry_in", pause, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// openWaiting opens the store like open(makesStore), waiting out a busy one.
func (a *app) openWaiting(ctx context.Context, log *slog.Logger) error {
	return waitBusy(ctx, log, "open", func() error {
		st, err := sqlstore.Open(ctx, a.dsn())
		if err != nil {
			return err
		}
		a.st = st
		return nil
	})
}
