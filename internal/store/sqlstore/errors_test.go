package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
	"github.com/drover-dev/drover/internal/testkit/gate"
)

// want is how wrap must classify an error.
type want int

const (
	plain       want = iota // passed through unchanged
	unique                  // a unique violation (isUnique), otherwise plain
	unreachable             // store.ErrUnavailable
	conflict                // store.ErrConflict
)

func checkClass(t *testing.T, d *DB, name string, err error, w want) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: the driver returned no error", name)
	}
	got := d.wrap(err)
	switch w {
	case plain, unique:
		if got != err {
			t.Errorf("%s: wrap(%v) = %v, want it unchanged", name, err, got)
		}
	case unreachable:
		if !errors.Is(got, store.ErrUnavailable) {
			t.Errorf("%s: wrap(%v) = %v, want ErrUnavailable", name, err, got)
		}
	case conflict:
		if !errors.Is(got, store.ErrConflict) {
			t.Errorf("%s: wrap(%v) = %v, want ErrConflict", name, err, got)
		}
	}
	if isUnique(err) != (w == unique) {
		t.Errorf("%s: isUnique(%v) = %v, want %v", name, err, !(w == unique), w == unique)
	}
}

// TestErrorsSQLite classifies errors that modernc.org/sqlite really returns.
func TestErrorsSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "d.db")
	d, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.db.Exec(`INSERT INTO counters (name, value) VALUES ('x', 1)`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.db.Exec(`INSERT INTO counters (name, value) VALUES ('x', 1)`)
	checkClass(t, d, "primary key violation", err, unique)
	for _, title := range []string{"a", "b"} {
		if _, err := d.CreateCard(ctx, "DRV", board.Card{Title: title, State: "ready"}, "operator"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = d.db.Exec(`UPDATE cards SET identifier = 'DRV-1' WHERE identifier = 'DRV-2'`)
	checkClass(t, d, "unique column violation", err, unique)
	_, err = d.db.Exec(`SELEC 1`)
	checkClass(t, d, "syntax error", err, plain)

	// Another connection holds the write lock and this one does not wait.
	holder, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	impatient, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	_, err = impatient.Exec(`INSERT INTO counters (name, value) VALUES ('y', 1)`)
	checkClass(t, d, "database locked by another connection", err, unreachable)
	// Said as what it is, with the file and what to do; "check that the
	// database is running" is PostgreSQL's advice.
	if msg := d.wrap(err).Error(); !strings.Contains(msg, "the board file "+path+" is locked by another process") ||
		!strings.Contains(msg, "run the command again") || strings.Contains(msg, "database is running") || !IsBusy(d.wrap(err)) {
		t.Errorf("a locked SQLite file: %s", msg)
	}
	tx.Rollback()

	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.Exec(`INSERT INTO counters (name, value) VALUES ('z', 1)`)
	checkClass(t, d, "read-only database", err, unreachable)
	if got := d.wrap(err).Error(); !strings.Contains(got, "read-only") || !strings.Contains(got, path) {
		t.Errorf("read-only error does not name the file and say read-only: %s", got)
	}

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = d.ListCards(ctx, store.CardFilter{})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a closed store: err = %v, want ErrUnavailable", err)
	}
}

// TestErrorsPostgres classifies errors that pgx really returns.
func TestErrorsPostgres(t *testing.T) {
	ctx := context.Background()
	d := &DB{dialect: postgres}
	// Nothing listens on port 1: refused before any PostgreSQL is involved.
	_, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:1/test?connect_timeout=5")
	checkClass(t, d, "connection refused", err, unreachable)

	gate.Postgres.Require(t) // the server's errors need PostgreSQL
	dsn := pgtest.DSN(t)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.db.Exec(`INSERT INTO counters (name, value) VALUES ('x', 1)`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.db.Exec(`INSERT INTO counters (name, value) VALUES ('x', 1)`)
	checkClass(t, s, "unique violation", err, unique)
	_, err = s.db.Exec(`SELEC 1`)
	checkClass(t, s, "syntax error", err, plain)
	for _, code := range []string{"40001", "40P01"} {
		_, err = s.db.Exec(fmt.Sprintf(`DO $$ BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = '%s'; END $$`, code))
		checkClass(t, s, "SQLSTATE "+code, err, conflict)
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
	checkClass(t, s, "connection terminated by the server (57P01)", err, unreachable)
	_, err = conn.Exec(ctx, `SELECT 1`)
	checkClass(t, s, "query on a closed connection", err, unreachable)
}

// TestErrorsSentinels: the sentinel errors database/sql and the drivers
// wrap a lost connection in are unavailable however deeply wrapped.
func TestErrorsSentinels(t *testing.T) {
	d := &DB{dialect: postgres}
	for _, err := range []error{driver.ErrBadConn, sql.ErrConnDone, io.EOF, io.ErrUnexpectedEOF} {
		checkClass(t, d, err.Error(), fmt.Errorf("query: %w", err), unreachable)
	}
	if got := d.wrap(fmt.Errorf("x: %w", context.Canceled)); errors.Is(got, store.ErrUnavailable) {
		t.Errorf("a cancelled context is not an outage: %v", got)
	}
}
