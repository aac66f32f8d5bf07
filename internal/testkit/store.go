package testkit

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
)

// Backend names a store backend a test runs on.
type Backend string

// The backends drover's store supports.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backends lists every backend, SQLite first.
var Backends = []Backend{SQLite, Postgres}

// DSN returns the address of a fresh, empty store on b: a SQLite file in
// t.TempDir(), or a PostgreSQL schema of its own (pgtest.DSN: the test is
// skipped with a message when DROVER_TEST_POSTGRES_URL is unset).
func DSN(t testing.TB, b Backend) string {
	t.Helper()
	switch b {
	case SQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "drover.db")
	case Postgres:
		return pgtest.DSN(t)
	}
	t.Fatalf("testkit: unknown backend %q", b)
	return ""
}

// Store opens a fresh store on b (see DSN), closed when t ends.
func Store(t testing.TB, b Backend) *sqlstore.DB {
	t.Helper()
	return Open(t, DSN(t, b))
}

// Open opens the store at dsn, closed when t ends.
func Open(t testing.TB, dsn string) *sqlstore.DB {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("testkit: opening store %s: %v", dsn, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// EachBackend runs f as one parallel subtest per backend, named after it.
func EachBackend(t *testing.T, f func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}
