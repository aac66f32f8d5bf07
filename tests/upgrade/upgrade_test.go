// Package upgrade tests that today's drover migrates and serves a store
// written by each released schema (testdata/schema-NNNNN, one fixture per
// schema), and that it refuses a store from a newer drover. docs/upgrades.md
// says how to add a fixture.
package upgrade

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx database/sql driver, for rawDB

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
	"github.com/drover-dev/drover/internal/testkit"
)

// fixtures are the fixture directories, oldest schema first.
func fixtures(t *testing.T) []string {
	dirs, err := filepath.Glob(filepath.Join("testdata", "schema-*"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	return dirs
}

// TestEveryReleasedSchemaHasAFixture: a new migration without its fixture
// would leave that schema's upgrade untested.
func TestEveryReleasedSchemaHasAFixture(t *testing.T) {
	have := map[string]bool{}
	for _, d := range fixtures(t) {
		have[filepath.Base(d)] = true
	}
	for v := int64(1); v <= sqlstore.SchemaVersion(); v++ {
		if name := fmt.Sprintf("schema-%05d", v); !have[name] {
			t.Errorf("no fixture %s: run TestGenerateFixture with the drover that introduced schema %d (see docs/upgrades.md)", filepath.Join("tests/upgrade/testdata", name), v)
		}
	}
}

func TestUpgradeServesTheFixture(t *testing.T) {
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
				upgrade(t, dir, backend)
			})
		})
	}
}

func upgrade(t *testing.T, dir string, backend testkit.Backend) {
	var expect map[testkit.Backend]Snapshot
	raw, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &expect); err != nil {
		t.Fatalf("%s/expect.json: %v", dir, err)
	}
	want, ok := expect[backend]
	if !ok {
		t.Fatalf("%s/expect.json has no %s board", dir, backend)
	}
	hook := testkit.NewReceiver(t)
	var b *board
	switch backend {
	case testkit.SQLite:
		b = newBoard(t, "", hook.URL+"/hook", "upgrade-test")
		db, err := os.ReadFile(filepath.Join(dir, "drover.db"))
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(b.dsn, "sqlite:")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, db, 0o644); err != nil {
			t.Fatal(err)
		}
	case testkit.Postgres:
		dsn := testkit.DSN(t, backend)
		loadDump(t, dsn, filepath.Join(dir, "postgres.sql"))
		b = newBoard(t, dsn, hook.URL+"/hook", "upgrade-test")
	}

	// Opening it migrates it to today's schema.
	testkit.Open(t, b.dsn).Close()
	if v := schemaOf(t, b.dsn); v != sqlstore.SchemaVersion() {
		t.Fatalf("after open the store is at schema %d, want %d", v, sqlstore.SchemaVersion())
	}

	// Read back: everything the old drover recorded is intact.
	got := b.snapshot()
	if err := sameBoard(want, got, 0); err != nil {
		t.Fatalf("the board %s wrote is not intact after the upgrade: %v", want.Version, err)
	}
	if r := got.Cards[cardRetry]; !r.NextAttemptAt.After(time.Now().Add(24*time.Hour)) || !r.Runs[0].Counted {
		t.Fatalf("%s: want one counted attempt with its retry still far ahead, got %+v", cardRetry, r)
	}
	var explain struct {
		Budgets []struct {
			Name        string
			Used, Limit int
		} `json:"budgets"`
	}
	b.json(&explain, "explain", cardRetry)
	budget := ""
	for _, x := range explain.Budgets {
		if x.Name == "policy.max_attempts" {
			budget = fmt.Sprintf("%d of %d", x.Used, x.Limit)
		}
	}
	if want := fmt.Sprintf("1 of %d", maxAttempts); budget != want {
		t.Fatalf("drover explain %s: max_attempts budget %q used, want %q", cardRetry, budget, want)
	}

	// Serve it: the ready card settles, nothing else runs, and the
	// notifications the old drover left undelivered go out.
	b.start()
	b.eventually(60*time.Second, cardReady+" settles in review", func() bool {
		return b.snapshot().Cards[cardReady].State == "review"
	})
	b.eventually(30*time.Second, "the old outbox rows are delivered", func() bool {
		return delivered(hook, cardParked, question) && delivered(hook, "profile_paused", pausedAgent)
	})
	b.stop()
	after := b.snapshot()
	for _, id := range []string{cardRetry, cardParked, cardDone, cardBlocked, cardGated} {
		if !reflect.DeepEqual(after.Cards[id], want.Cards[id]) {
			t.Errorf("%s changed while serving: was %+v, now %+v", id, want.Cards[id], after.Cards[id])
		}
	}
	if !slices.Equal(after.Paused, []string{pausedAgent}) || !strings.Contains(after.Parked[cardParked], question) {
		t.Errorf("after serving: paused %v, parked %v", after.Paused, after.Parked)
	}
}

// delivered reports whether r accepted a notification naming every word.
func delivered(r *testkit.Receiver, words ...string) bool {
next:
	for _, q := range r.Requests("") {
		if !q.Delivered() {
			continue
		}
		for _, w := range words {
			if !strings.Contains(string(q.Body), w) {
				continue next
			}
		}
		return true
	}
	return false
}

// sameBoard compares two snapshots; retry times may differ by up to slack.
func sameBoard(want, got Snapshot, slack time.Duration) error {
	var diffs []string
	for id, w := range want.Cards {
		g, ok := got.Cards[id]
		if !ok {
			diffs = append(diffs, id+" is missing")
			continue
		}
		if (w.NextAttemptAt == nil) != (g.NextAttemptAt == nil) ||
			(w.NextAttemptAt != nil && (g.NextAttemptAt.Sub(*w.NextAttemptAt).Abs() > slack)) {
			diffs = append(diffs, fmt.Sprintf("%s next_attempt_at %v, want %v", id, g.NextAttemptAt, w.NextAttemptAt))
		}
		w.NextAttemptAt, g.NextAttemptAt = nil, nil
		if !reflect.DeepEqual(w, g) {
			diffs = append(diffs, fmt.Sprintf("%s is %+v, want %+v", id, g, w))
		}
	}
	if len(got.Cards) != len(want.Cards) {
		diffs = append(diffs, fmt.Sprintf("%d cards, want %d", len(got.Cards), len(want.Cards)))
	}
	if !slices.Equal(got.Paused, want.Paused) {
		diffs = append(diffs, fmt.Sprintf("paused agents %v, want %v", got.Paused, want.Paused))
	}
	if !reflect.DeepEqual(questions(got.Parked), questions(want.Parked)) {
		diffs = append(diffs, fmt.Sprintf("parked questions %v, want %v", got.Parked, want.Parked))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s", strings.Join(diffs, "; "))
	}
	return nil
}

// loadDump loads a postgres.sql fixture into the schema dsn names.
func loadDump(t *testing.T, dsn, path string) {
	t.Helper()
	dump, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	schema := u.Query().Get("search_path")
	conn, err := pgx.Connect(context.Background(), os.Getenv(pgtest.Env))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	sql := strings.ReplaceAll(string(dump), schemaPlaceholder, schema)
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
}

// schemaOf is the store's schema version as its migration table records it.
func schemaOf(t *testing.T, dsn string) int64 {
	t.Helper()
	var v int64
	db := rawDB(t, dsn)
	defer db.Close()
	if err := db.QueryRow(`SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// rawDB opens the database behind dsn without drover (and so without
// migrating it).
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	driver, name := "pgx", dsn
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		driver, name = "sqlite", "file:"+path
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// questions is a parked-questions map as drover status shows it today: the
// question without the "Question: " its comment starts with (status showed
// the comment whole before issue 10, so older fixtures carry the prefix; the
// comment itself is stored unchanged).
func questions(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for id, q := range m {
		out[id] = strings.TrimPrefix(q, "Question: ")
	}
	return out
}
