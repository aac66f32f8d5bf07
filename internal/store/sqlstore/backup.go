package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// ErrNotSQLite is returned by Backup and Restore on a PostgreSQL store.
var ErrNotSQLite = errors.New("PostgreSQL stores are backed up with PostgreSQL's own tools: pg_dump -Fc -f drover.dump DSN, and pg_restore -d DSN drover.dump into an empty database")

// FileInfo describes a SQLite file that holds a drover store.
type FileInfo struct {
	Path          string     `json:"path"`
	SchemaVersion int64      `json:"schema_version"`
	Tables        []TableSum `json:"tables"`
}

// Path is the SQLite file of the store ("" on PostgreSQL).
func (d *DB) Path() string { return d.path }

// Backup writes a consistent copy of the SQLite store to dest with VACUUM
// INTO, while other processes keep writing (it reads one snapshot). The copy
// is written beside dest and moved into place only once PRAGMA
// integrity_check passes on it; an existing dest is refused unless force.
func (d *DB) Backup(ctx context.Context, dest string, force bool) (FileInfo, error) {
	if d.dialect != sqlite {
		return FileInfo{}, ErrNotSQLite
	}
	if !force {
		if _, err := os.Lstat(dest); err == nil {
			return FileInfo{}, fmt.Errorf("backup: %s exists; pass --force to replace it, or name a new file", dest)
		}
	}
	tmp, err := tempBeside(dest)
	if err != nil {
		return FileInfo{}, err
	}
	defer os.Remove(tmp)
	if _, err := d.db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return FileInfo{}, fmt.Errorf("backup: VACUUM INTO %s: %w", tmp, d.wrap(err))
	}
	info, err := CheckFile(ctx, tmp)
	if err != nil {
		return FileInfo{}, fmt.Errorf("backup: the copy does not check out, nothing was written to %s: %w", dest, err)
	}
	if err := syncFile(tmp); err != nil {
		return FileInfo{}, err
	}
	if force {
		err = os.Rename(tmp, dest)
	} else {
		err = os.Link(tmp, dest) // refuses a dest made meanwhile
	}
	if err != nil {
		return FileInfo{}, fmt.Errorf("backup: %w", err)
	}
	info.Path = dest
	return info, syncDir(filepath.Dir(dest))
}

// CheckFile opens path read-only and checks that it is a drover store this
// drover can serve: a goose_db_version table at a schema version it knows
// (a newer one is store.ErrSchemaTooNew), every board table, and PRAGMA
// integrity_check answering ok. It returns the schema version and each
// board table's count and checksum.
func CheckFile(ctx context.Context, path string) (FileInfo, error) {
	info := FileInfo{Path: path}
	if _, err := os.Stat(path); err != nil {
		return info, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return info, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		return info, fmt.Errorf("%s is not a drover store (no schema version table: %v)", path, err)
	}
	info.SchemaVersion = v.Int64
	latest, err := latestSchema(sqlite)
	if err != nil {
		return info, err
	}
	if info.SchemaVersion > latest {
		return info, fmt.Errorf("%w: %s is at schema version %d and this drover knows up to %d; use a newer drover", store.ErrSchemaTooNew, path, info.SchemaVersion, latest)
	}
	var verdict []string
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return info, fmt.Errorf("%s: integrity_check: %w", path, err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return info, err
		}
		verdict = append(verdict, s)
	}
	rows.Close()
	if len(verdict) != 1 || verdict[0] != "ok" {
		return info, fmt.Errorf("%s fails PRAGMA integrity_check: %s", path, strings.Join(verdict, "; "))
	}
	d := &DB{db: db, dialect: sqlite, path: path}
	if info.Tables, err = d.Checksums(ctx); err != nil {
		return info, fmt.Errorf("%s is not a whole drover store: %w", path, err)
	}
	return info, nil
}

// RestoreReport says what Restore did.
type RestoreReport struct {
	FileInfo
	// Previous is where the store that was at the target went ("" when
	// there was none): a hard link to it, named target.bak-TIME.
	Previous string `json:"previous"`
}

// Restore replaces the SQLite store at target with the one in from, after
// CheckFile passes on from. It holds target's restore lock (lock.go) from
// start to end: it refuses while any drover process has target open, and
// no drover process opens target until it is done. The new store is written
// beside target (VACUUM INTO, so a write-ahead log beside from is
// included), synced, and renamed over target in one step; the old store
// stays as target.bak-TIME.
func Restore(ctx context.Context, from, target string) (RestoreReport, error) {
	rep := RestoreReport{}
	info, err := CheckFile(ctx, from)
	if err != nil {
		return rep, err
	}
	if a, b := absPath(from), absPath(target); a == b {
		return rep, fmt.Errorf("restore: %s is the store itself; name a backup file", from)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return rep, err
	}
	lock, err := exclusiveLock(target)
	if errors.Is(err, errInUse) {
		return rep, fmt.Errorf("restore: %s is open in another drover process (a serve, or a command still running): stop it first: %w", target, err)
	}
	if err != nil {
		return rep, fmt.Errorf("restore: %w", err)
	}
	if lock != nil {
		defer lock.Close()
	}
	restoring("locked")
	tmp, err := tempBeside(target)
	if err != nil {
		return rep, err
	}
	defer os.Remove(tmp)
	src, err := sql.Open("sqlite", "file:"+from+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return rep, err
	}
	_, err = src.ExecContext(ctx, `VACUUM INTO ?`, tmp)
	src.Close()
	if err != nil {
		return rep, fmt.Errorf("restore: copying %s: %w", from, err)
	}
	if err := syncFile(tmp); err != nil {
		return rep, err
	}
	restoring("copied")
	if _, err := os.Stat(target); err == nil {
		if err := checkpoint(ctx, target); err != nil {
			return rep, err
		}
		rep.Previous = target + ".bak-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Link(target, rep.Previous); err != nil {
			return rep, fmt.Errorf("restore: keeping the old store as %s: %w", rep.Previous, err)
		}
		for _, side := range []string{target + "-wal", target + "-shm"} {
			if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return rep, fmt.Errorf("restore: %w", err)
			}
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return rep, fmt.Errorf("restore: %w", err)
	}
	info.Path = target
	rep.FileInfo = info
	return rep, syncDir(filepath.Dir(target))
}

// restoreHook, when set (tests only), is called at each step of Restore
// while it holds the lock: "locked", then "copied" (the new store is
// written beside the old one, which is not replaced yet).
var restoreHook func(step string)

func restoring(step string) {
	if restoreHook != nil {
		restoreHook(step)
	}
}

// checkpoint moves everything in target's write-ahead log into the file
// itself and empties the log, so the file alone is the whole store.
func checkpoint(ctx context.Context, target string) error {
	db, err := sql.Open("sqlite", "file:"+target+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	var busy, logged, moved int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &moved); err != nil {
		return fmt.Errorf("restore: checkpointing %s: %w", target, err)
	}
	if busy != 0 {
		return fmt.Errorf("restore: %s is in use by another process; stop it first", target)
	}
	return nil
}

// latestSchema is the highest migration version embedded for dialect.
func latestSchema(dl dialect) (int64, error) {
	dir := "migrations/sqlite"
	if dl == postgres {
		dir = "migrations/postgres"
	}
	ents, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, e := range ents {
		num, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.ParseInt(num, 10, 64); err == nil {
			latest = max(latest, v)
		}
	}
	return latest, nil
}

// tempBeside names a file that does not exist yet in dest's directory.
func tempBeside(dest string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	// VACUUM INTO wants a file that does not exist (or is empty).
	return name, os.Remove(name)
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
