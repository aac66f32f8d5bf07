package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	moderncsqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/drover-dev/drover/internal/store"
)

// Errors are told apart by what the drivers say they are (error types,
// SQLSTATE codes, SQLite result codes, errno values), never by their text.

// wrap maps a driver error to the store's errors: no row is
// store.ErrNotFound, a lost or unreachable database store.ErrUnavailable, a
// transaction the database refused for concurrency store.ErrConflict; a
// read-only SQLite file says what to fix. Anything else passes unchanged.
func (d *DB) wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	if ro := d.readOnly(err); ro != err {
		return ro
	}
	switch {
	case d.dialect == sqlite && !d.closed.Load() && IsBusy(err):
		return d.busy(err)
	case d.closed.Load() || unavailable(err):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	case retryable(err):
		return fmt.Errorf("%w (the database refused the transaction: %w)", store.ErrConflict, err)
	}
	return err
}

// unavailable reports whether err means the database went away or could not
// be reached, rather than that a statement was wrong.
func unavailable(err error) bool {
	for _, target := range []error{driver.ErrBadConn, sql.ErrConnDone, io.EOF, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH} {
		if errors.Is(err, target) {
			return true
		}
	}
	var netErr net.Error // *net.OpError, *net.DNSError, timeouts
	var connectErr *pgconn.ConnectError
	if errors.As(err, &netErr) || errors.As(err, &connectErr) || pgconn.SafeToRetry(err) {
		return true
	}
	if code, ok := sqlState(err); ok {
		// Class 08 connection exceptions; 57P01 admin_shutdown, 57P02
		// crash_shutdown, 57P03 cannot_connect_now (starting up or shutting
		// down).
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
	}
	if code, ok := sqliteCode(err); ok {
		switch code & 0xff { // the primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY:
			return true
		}
	}
	return false
}

// IsBusy reports whether err is SQLite saying that another connection holds
// the lock it needs (SQLITE_BUSY or SQLITE_LOCKED) for longer than the busy
// timeout: the store is there and works, and waiting longer may succeed.
func IsBusy(err error) bool {
	code, ok := sqliteCode(err)
	return ok && (code&0xff == sqlite3.SQLITE_BUSY || code&0xff == sqlite3.SQLITE_LOCKED)
}

// retryable reports whether the database refused a transaction for a
// concurrent one (serialization failure, deadlock): nothing was written.
func retryable(err error) bool {
	code, ok := sqlState(err)
	return ok && (code == "40001" || code == "40P01")
}

// isUnique reports whether err is a unique (or primary key) violation.
func isUnique(err error) bool {
	if code, ok := sqlState(err); ok {
		return code == "23505"
	}
	code, ok := sqliteCode(err)
	return ok && (code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// sqlState is PostgreSQL's SQLSTATE of err, if err came from the server.
func sqlState(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, true
	}
	return "", false
}

// sqliteCode is SQLite's extended result code of err, if err came from SQLite.
func sqliteCode(err error) (int, bool) {
	var e *moderncsqlite.Error
	if errors.As(err, &e) {
		return e.Code(), true
	}
	return 0, false
}

// readOnly rewrites SQLite's "read-only database" and "cannot open" into an
// error that names the file and what to fix; other errors pass unchanged.
func (d *DB) readOnly(err error) error {
	if err == nil || d.dialect != sqlite {
		return err
	}
	var e *moderncsqlite.Error
	if !errors.As(err, &e) || (e.Code()&0xff != sqlite3.SQLITE_READONLY && e.Code()&0xff != sqlite3.SQLITE_CANTOPEN) {
		return err
	}
	path := strings.TrimPrefix(d.dsn, "sqlite:")
	return fmt.Errorf("%w: the SQLite store %s is read-only or cannot be opened for writing (%v); drover needs write access to %s, %s-wal, %s-shm and the directory %s; nothing was written",
		store.ErrUnavailable, path, e, path, path, path, filepath.Dir(path))
}

// busy is SQLite's "database is locked" said as what it is: the board's
// file is held by another process (a drover serve, a backup, a sqlite3
// shell) for longer than the busy timeout. Not "check that the database is
// running": a SQLite file has no server; that advice is PostgreSQL's.
func (d *DB) busy(err error) error {
	return fmt.Errorf("%w: the board file %s is locked by another process (another drover, a backup or a sqlite3 shell) for longer than %s (%w); wait for it to finish and run the command again, or stop the process that holds it",
		store.ErrUnavailable, d.path, busyTimeout, err)
}
