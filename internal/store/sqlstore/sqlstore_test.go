package sqlstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestConformance: both backends pass the store's conformance suite.
func TestConformanceSQLite(t *testing.T)   { storetest.Run(t, opener(testkit.SQLite)) }
func TestConformancePostgres(t *testing.T) { storetest.Run(t, opener(testkit.Postgres)) }

func opener(be testkit.Backend) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store { return testkit.Store(t, be) }
}

func TestRefusesNewerSchema(t *testing.T) {
	path := "sqlite:" + filepath.Join(t.TempDir(), "d.db")
	s, err := sqlstore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ExecForTest(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (999, 1)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = sqlstore.Open(context.Background(), path)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("open newer schema: err = %v, want ErrSchemaTooNew", err)
	}
}

func TestBadDSN(t *testing.T) {
	_, err := sqlstore.Open(context.Background(), "mysql://x")
	if err == nil {
		t.Fatal("want an error for an unknown DSN")
	}
}
