// Package pgtest gives each test its own PostgreSQL schema on the server named
// by DROVER_TEST_POSTGRES_URL, or skips the test with a message when it is unset.
package pgtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/drover-dev/drover/internal/testkit/gate"
)

// Env is the variable that points the tests at a PostgreSQL server.
const Env = gate.PostgresEnv

// DSN creates a fresh schema for t and returns a DSN whose search_path is it.
// The schema is dropped when t ends. Without Env the test is skipped; with
// Env set but the server unreachable the test fails (CI must not pass quietly).
func DSN(t testing.TB) string {
	t.Helper()
	gate.Postgres.Require(t)
	base := os.Getenv(Env)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("%s is set but PostgreSQL is unreachable: %v", Env, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("drover_t_%d", rand.Int64N(1<<62))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
