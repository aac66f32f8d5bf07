package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/dispatch"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

func (a *app) storeCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Move a board between stores"}
	var to string
	cp := &cobra.Command{
		Use:   "copy --to DSN",
		Short: "Copy the whole board from the store (--store) into an empty store (--to), verified",
		Long: `Copy the whole board — cards, runs, events (with their sequence numbers),
comments, the notification outbox, agent and breaker states and the identifier
counters — from the store named by --store (or DROVER_STORE, or WORKFLOW.md)
into the empty store named by --to: SQLite to PostgreSQL, PostgreSQL to SQLite,
or between two of one kind. Node and leadership rows are not copied: they
describe the processes that served the source; the first serve on the target
writes its own.

All or nothing: the copy is one transaction on the target. Before it commits,
every table's row count and checksum on the target are compared with the
source's; on any failure or difference it rolls back and the target stays empty.
Run it again after fixing the cause. It refuses a target that holds any board
row, and a source (or target) with a live drover serve: stop serve first.
Progress (rows per table) goes to stderr.`,
		Example: `  drover store copy --to postgres://drover@db:5432/drover
  drover --store postgres://drover@db:5432/drover store copy --to sqlite:./back.db`,
		Args: cobra.NoArgs,
		RunE: a.withStore(func(c *cobra.Command, _ []string) error {
			if to == "" {
				return usagef("--to is required: the DSN of an empty store (sqlite:PATH or postgres://USER@HOST:PORT/DB)")
			}
			return a.copyStore(c.Context(), normalizeDSN(to, ""))
		}),
	}
	cp.Flags().StringVar(&to, "to", "", "DSN of the empty target store: sqlite:PATH or postgres://…")
	cmd.AddCommand(cp)
	return cmd
}

func (a *app) copyStore(ctx context.Context, to string) error {
	from := a.dsn()
	if to == from {
		return usagef("--to names the source store itself (%s); name another store", store.RedactDSN(to))
	}
	src := a.st.(*sqlstore.DB)
	if err := a.refuseLiveServe(ctx, src, "the source store"); err != nil {
		return err
	}
	dst, err := sqlstore.Open(ctx, to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dst.Close()
	if err := a.refuseLiveServe(ctx, dst, "the target store"); err != nil {
		return err
	}
	last := time.Time{}
	rep, err := sqlstore.Copy(ctx, src, dst, sqlstore.CopyOptions{Progress: func(table string, done, total int64) {
		if done == total || time.Since(last) > time.Second {
			fmt.Fprintf(a.errw, "store copy: %s %d/%d\n", table, done, total)
			last = time.Now()
		}
	}})
	if err != nil {
		return fmt.Errorf("store copy: %w (nothing was written to %s)", err, store.RedactDSN(to))
	}
	if a.asJSON {
		return a.printJSON(map[string]any{"from": store.RedactDSN(from), "to": store.RedactDSN(to),
			"tables": rep.Tables, "event_seq": rep.EventSeq, "verified": true})
	}
	fmt.Fprintf(a.out, "copied %s → %s in one transaction; counts and checksums verified on the target\n", store.RedactDSN(from), store.RedactDSN(to))
	t := newTable(a.out, "TABLE", "ROWS", "CHECKSUM (SOURCE = TARGET)")
	for _, s := range rep.Tables {
		t.row(s.Table, fmt.Sprint(s.Rows), s.Checksum)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "new events continue after seq %d; nodes and leadership were not copied (the first serve on the target records its own)\n", rep.EventSeq)
	return nil
}

// refuseLiveServe fails when a drover serve other than this process is live
// on st, naming it and how to stop it.
func (a *app) refuseLiveServe(ctx context.Context, st store.Store, which string) error {
	lease := a.fullConfig().Dispatch.Lease
	if lease <= 0 {
		lease = 30 * time.Second
	}
	live, err := dispatch.LiveNodes(ctx, st, lease, time.Now())
	if err != nil {
		return err
	}
	if len(live) == 0 {
		return nil
	}
	var names []string
	for _, n := range live {
		names = append(names, fmt.Sprintf("node %s (pid %d on %s, seen %s ago)", n.Name, n.PID, n.Host, dur(time.Since(n.SeenAt))))
	}
	return fmt.Errorf("a drover serve is live on %s: %s; stop it first (Ctrl-C, or kill -TERM PID on its host) and run this again", which, strings.Join(names, ", "))
}

func (a *app) backupCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the SQLite store to FILE, also while serve runs",
		Long: `Write a consistent copy of the SQLite store to FILE with SQLite's VACUUM INTO:
one snapshot, taken while drover serve keeps running. The copy is written beside
FILE and moved into place only after PRAGMA integrity_check passes on it. An
existing FILE is refused unless --force. Put it back with drover restore FILE.

A PostgreSQL store is backed up with PostgreSQL's own tools:
  pg_dump -Fc -f drover.dump 'postgres://USER@HOST:PORT/DB'
  pg_restore --no-owner -d 'postgres://USER@HOST:PORT/EMPTY_DB' drover.dump`,
		Args: exactArgs(1, "FILE"),
		RunE: a.withStore(func(c *cobra.Command, args []string) error {
			st := a.st.(*sqlstore.DB)
			if st.Backend() != "sqlite" {
				return usagef("backup: %v", sqlstore.ErrNotSQLite)
			}
			dest, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if dest == st.Path() {
				return usagef("backup: %s is the store itself; name another file", dest)
			}
			info, err := st.Backup(c.Context(), dest, force)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(info)
			}
			fmt.Fprintf(a.out, "backed up %s to %s: schema version %d, integrity_check ok, %s\n", st.Path(), info.Path, info.SchemaVersion, counts(info.Tables))
			return nil
		}),
	}
	c.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	return c
}

func (a *app) restoreCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the SQLite store with the backup in FILE (serve must be stopped)",
		Long: `Replace the SQLite store (--store, DROVER_STORE or WORKFLOW.md) with the drover
store in FILE, as written by drover backup. FILE is checked first: a drover
schema this drover knows (a newer one is refused with both versions) and PRAGMA
integrity_check ok. It refuses while a drover serve is live on the store, or any
drover process has it open, and holds the store's lock (PATH.lock) until it is
done, so a serve started meanwhile refuses to open the store. The new
store is written beside the old one, synced and renamed over it in one step; the
old store is kept beside it as PATH.bak-TIME (printed). A PostgreSQL store is
restored with pg_restore (see drover backup --help).`,
		Args: exactArgs(1, "FILE"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			cfg, err := loadConfig(a.configPath)
			if err != nil {
				return err
			}
			a.cfg = cfg
			dsn := a.dsn()
			path, ok := strings.CutPrefix(dsn, "sqlite:")
			if !ok {
				return usagef("restore: the store is not SQLite (%s); %v", store.RedactDSN(dsn), sqlstore.ErrNotSQLite)
			}
			if err := a.refuseLiveServeAt(ctx, path); err != nil {
				return err
			}
			rep, err := sqlstore.Restore(ctx, args[0], path)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(rep)
			}
			fmt.Fprintf(a.out, "restored %s into %s: schema version %d, integrity_check ok, %s\n", args[0], rep.Path, rep.SchemaVersion, counts(rep.Tables))
			if rep.Previous != "" {
				fmt.Fprintf(a.out, "the store it replaced is kept as %s\n", rep.Previous)
			}
			return nil
		},
	}
}

// refuseLiveServeAt checks the SQLite store at path, when there is one, for
// a live serve. A store that does not open (corrupt, say) is not checked:
// replacing it is what restore is for.
func (a *app) refuseLiveServeAt(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	st, err := sqlstore.Open(ctx, "sqlite:"+path)
	if err != nil {
		return nil
	}
	defer st.Close()
	return a.refuseLiveServe(ctx, st, path)
}

// counts is "cards 3, runs 5, …" for the tables that hold a board's content.
func counts(ts []sqlstore.TableSum) string {
	var parts []string
	for _, s := range ts {
		if s.Table != "counters" {
			parts = append(parts, fmt.Sprintf("%s %d", s.Table, s.Rows))
		}
	}
	return strings.Join(parts, ", ")
}
