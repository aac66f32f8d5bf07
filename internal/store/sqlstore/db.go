// Package sqlstore implements store.Store on SQLite (modernc.org/sqlite, pure
// Go) and PostgreSQL (pgx v5) with one body of SQL. The two differ only in
// placeholders, a few functions and how other processes' writes are noticed.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/drover-dev/drover/internal/store"
)

//go:embed migrations
var migrations embed.FS

type dialect int

const (
	sqlite dialect = iota
	postgres
)

// DB is a store.Store on a SQL database.
type DB struct {
	db      *sql.DB
	dialect dialect
	dsn     string
	path    string   // the SQLite file
	lock    *os.File // the shared restore lock (lock.go), nil when none
	hub     *hub
	closeMu sync.Once
	closed  atomic.Bool // Close was called: every later call is unavailable
	stop    chan struct{}
	clock   func() time.Time
	// beforeCommit, when set (by tests only), runs in every write
	// transaction just before its commit.
	beforeCommit func()
	// afterCommit, when set (by tests only), runs after every commit; an
	// error it returns is reported as the commit's (a lost reply).
	afterCommit func() error
}

var _ store.Store = (*DB)(nil)

// Option configures a store at Open.
type Option func(*DB)

// WithClock makes the store read the time from now instead of time.Now for
// every timestamp it writes itself (card creation and update, events,
// comments, outbox rows, agent states, a run's claim time, the leadership
// lease). The simulation passes its fake clock here.
func WithClock(now func() time.Time) Option {
	return func(d *DB) { d.clock = now }
}

// Open connects to dsn ("sqlite:PATH", a bare path ending in .db, or
// "postgres://…"), applies the embedded migrations and returns the store.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	d := &DB{dsn: dsn, hub: newHub(), stop: make(chan struct{}), clock: time.Now}
	for _, o := range opts {
		o(d)
	}
	var err error
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		d.dialect = postgres
		d.db, err = sql.Open("pgx", dsn)
		if err == nil {
			d.db.SetMaxOpenConns(8)
			d.db.SetConnMaxIdleTime(time.Minute)
		}
	case strings.HasPrefix(dsn, "sqlite:"):
		d.dialect = sqlite
		d.path = strings.TrimPrefix(dsn, "sqlite:")
		if err = mkdirFor(d.path); err == nil {
			d.lock, err = shareLock(d.path)
		}
		if err == nil {
			d.db, err = openSQLite(d.path)
		}
	default:
		return nil, fmt.Errorf("store: %q is not a store DSN; use sqlite:PATH or postgres://USER@HOST:PORT/DB", store.RedactDSN(dsn))
	}
	if err != nil {
		d.unlock()
		if errors.Is(err, ErrRestoring) {
			return nil, fmt.Errorf("store: open %s: %w; start again once it is done", store.RedactDSN(dsn), err)
		}
		return nil, fmt.Errorf("store: open %s: %w", store.RedactDSN(dsn), err)
	}
	// Processes opening a new SQLite file at once would race: the first
	// connection's journal_mode(WAL) switch returns SQLITE_BUSY at once (no
	// busy timeout applies to it) to whoever loses, and each would apply
	// migration 1 ("table already exists"). An exclusive lock on a file
	// beside the database lets one connect and migrate while the others
	// wait. Where the lock file cannot be made (a read-only directory)
	// nobody can migrate anyway, and the open reports that.
	if d.dialect == sqlite && d.path != "" && !strings.Contains(d.path, ":memory:") {
		if unlock, err := lockFile(d.path + ".migrate.lock"); err == nil {
			defer unlock()
		}
	}
	if err := d.Ping(ctx); err != nil {
		d.db.Close()
		d.unlock()
		return nil, d.readOnly(err)
	}
	if err := d.migrate(ctx); err != nil {
		d.db.Close()
		d.unlock()
		return nil, d.readOnly(err)
	}
	return d, nil
}

// mkdirFor makes the directory of the SQLite file at path.
func mkdirFor(path string) error {
	if path == "" {
		return errors.New("empty path; use sqlite:/path/to/drover.db")
	}
	if dir := filepath.Dir(path); dir != "" && !strings.Contains(path, ":memory:") {
		return os.MkdirAll(dir, 0o755)
	}
	return nil
}

// unlock lets go of the restore lock.
func (d *DB) unlock() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
}

// busyTimeout is how long a SQLite connection waits for another's lock.
const busyTimeout = 10 * time.Second

func openSQLite(path string) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New("empty path; use sqlite:/path/to/drover.db")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	// One connection: every write in this process goes through one path, and
	// BEGIN IMMEDIATE plus the busy timeout orders writers across processes.
	db.SetMaxOpenConns(1)
	return db, nil
}

// Backend implements store.Store.
func (d *DB) Backend() string {
	if d.dialect == postgres {
		return "postgres"
	}
	return "sqlite"
}

// Ping implements store.Store.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.db.PingContext(ctx); err != nil {
		if d.dialect == sqlite && IsBusy(err) {
			return d.busy(err)
		}
		return fmt.Errorf("%w: cannot reach %s (%w); check that the database is running and that --store (or DROVER_STORE) names it", store.ErrUnavailable, store.RedactDSN(d.dsn), err)
	}
	return nil
}

// Close implements store.Store.
func (d *DB) Close() error {
	var err error
	d.closeMu.Do(func() {
		d.closed.Store(true)
		close(d.stop)
		err = d.db.Close()
		d.unlock()
	})
	return err
}

func (d *DB) migrate(ctx context.Context) error {
	sub, gd := "migrations/sqlite", goose.DialectSQLite3
	var opts []goose.ProviderOption
	if d.dialect == postgres {
		sub, gd = "migrations/postgres", goose.DialectPostgres
		// goose's default lock id is one constant for every schema of a
		// database, so drover stores in different schemas of one database
		// (tests, several boards) waited on each other's migrations in 5s
		// steps. Lock per schema instead, polling every second.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID(d.dsn)), lock.WithLockTimeout(1, 300))
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	fsys, err := fs.Sub(migrations, sub)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(gd, d.db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	srcs := p.ListSources()
	latest := srcs[len(srcs)-1].Version
	if cur, err := p.GetDBVersion(ctx); err == nil && cur > latest {
		return fmt.Errorf("%w: the database is at schema version %d and this drover knows up to %d; upgrade drover (or point --store at another database)", store.ErrSchemaTooNew, cur, latest)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: applying migrations: %w", d.wrap(err))
	}
	return nil
}

// migrationLockID is the advisory lock that serialises migrations of one
// schema: derived from the database and search_path named by the DSN.
func migrationLockID(dsn string) int64 {
	key := dsn
	if u, err := url.Parse(dsn); err == nil {
		key = u.Path + "?" + u.Query().Get("search_path") + "&" + u.Query().Get("options")
	}
	h := fnv.New64a()
	h.Write([]byte("drover-migrate:" + key))
	return int64(h.Sum64() & math.MaxInt64)
}

// q rewrites ? placeholders to $n for PostgreSQL.
func (d *DB) q(s string) string {
	if d.dialect != postgres {
		return s
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// now is the store's clock in UTC, at the millisecond the columns keep.
func (d *DB) now() time.Time { return d.clock().UTC().Truncate(time.Millisecond) }

func ms(t time.Time) int64 { return t.UnixMilli() }

func msPtr(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMs(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMs(v.Int64)
	return &t
}
