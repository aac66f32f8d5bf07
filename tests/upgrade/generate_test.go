package upgrade

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the sqlite database/sql driver, for VACUUM INTO and rawDB

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
	"github.com/drover-dev/drover/internal/testkit"
)

// GenerateEnv, set to 1, makes TestGenerateFixture write the fixture of the
// current schema. It is off in every ordinary run: a fixture is written once,
// by the drover that released its schema, and then never changes.
//
// To add the fixture of a new schema (docs/upgrades.md says when):
//
//	DROVER_UPGRADE_FIXTURE=1 DROVER_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//	  go test ./tests/upgrade -run TestGenerateFixture -v
//
// and commit testdata/schema-NNNNN/ (drover.db, postgres.sql, expect.json).
const GenerateEnv = "DROVER_UPGRADE_FIXTURE"

// schemaPlaceholder stands for the PostgreSQL schema in postgres.sql; the
// test replaces it with a fresh schema of its own.
const schemaPlaceholder = "drover_fixture_schema"

// deadHook is an address nothing listens on: the fixture's notifications stay
// undelivered in its outbox.
const deadHook = "http://127.0.0.1:1/hook"

func TestGenerateFixture(t *testing.T) {
	if os.Getenv(GenerateEnv) != "1" {
		t.Skipf("set %s=1 to write the fixture of schema %d", GenerateEnv, sqlstore.SchemaVersion())
	}
	pgBase := os.Getenv(pgtest.Env)
	if pgBase == "" {
		t.Fatalf("%s is needed too: the fixture holds a PostgreSQL dump", pgtest.Env)
	}
	dir := filepath.Join("testdata", fmt.Sprintf("schema-%05d", sqlstore.SchemaVersion()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	lite := newBoard(t, "", deadHook, "fixture-gen")
	makeBoard(lite)
	snap := lite.snapshot()
	snap.Version = strings.TrimSpace(lite.ok("--version"))
	if rev, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		snap.Version += " at " + strings.TrimSpace(string(rev))
	}
	out := filepath.Join(dir, "drover.db")
	os.Remove(out)
	db := rawDB(t, lite.dsn)
	defer db.Close()
	abs, _ := filepath.Abs(out)
	if _, err := db.Exec(`VACUUM INTO ?`, abs); err != nil {
		t.Fatal(err)
	}

	// The same board on PostgreSQL, dumped as plain SQL.
	pgDSN := pgtest.DSN(t)
	pg := newBoard(t, pgDSN, deadHook, "fixture-gen")
	makeBoard(pg)
	u, _ := url.Parse(pgDSN)
	schema := u.Query().Get("search_path")
	dump, err := exec.Command("pg_dump", "--dbname="+pgBase, "--schema="+schema, "--inserts", "--no-owner", "--no-privileges").Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	// psql meta-commands (pg_dump's \restrict lines) are not SQL.
	var keep []string
	for _, line := range strings.Split(string(dump), "\n") {
		if !strings.HasPrefix(line, "\\") {
			keep = append(keep, line)
		}
	}
	text := strings.ReplaceAll(strings.Join(keep, "\n"), schema, schemaPlaceholder)
	text = strings.Replace(text, "CREATE SCHEMA "+schemaPlaceholder+";", "-- CREATE SCHEMA: the test makes its own", 1)
	header := fmt.Sprintf("-- The upgrade fixture of drover store schema %d on PostgreSQL (tests/upgrade).\n-- Written by TestGenerateFixture; %s stands for the schema.\n", sqlstore.SchemaVersion(), schemaPlaceholder)
	if err := os.WriteFile(filepath.Join(dir, "postgres.sql"), []byte(header+text), 0o644); err != nil {
		t.Fatal(err)
	}
	pgSnap := pg.snapshot()
	pgSnap.Version = snap.Version
	if err := sameBoard(snap, pgSnap, time.Hour); err != nil {
		t.Fatalf("the PostgreSQL board differs from the SQLite one: %v", err)
	}
	// Each backend's board as the generating drover showed it (their retry
	// times differ by the seconds between the two runs).
	b, _ := json.MarshalIndent(map[testkit.Backend]Snapshot{testkit.SQLite: snap, testkit.Postgres: pgSnap}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "expect.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (drover.db, postgres.sql, expect.json) with %s", dir, snap.Version)
}

// makeBoard plays the fixture board's history with the real binary: cards in
// every state drover keeps across an upgrade.
func makeBoard(b *board) {
	b.ok("card", "add", "--title", "Retry later", "--state", "ready", "--spec", `{"sim":["agent_failed","succeeded"]}`)
	b.ok("card", "add", "--title", "Asks a question", "--state", "ready", "--spec", `{"sim":["input_required","succeeded"],"sim_question":"`+question+`"}`)
	b.ok("card", "add", "--title", "Done already", "--state", "ready", "--spec", `{"sim":["succeeded"]}`)
	b.ok("card", "add", "--title", "Blocked by hand", "--state", "backlog")
	b.ok("card", "block", cardBlocked, "--reason", blockReason)
	b.ok("card", "add", "--title", "Gated agent", "--state", "ready", "--agent", pausedAgent, "--spec", `{"sim":["auth_failed","succeeded"]}`)
	b.start()
	var s Snapshot
	defer func() {
		if b.t.Failed() {
			b.t.Logf("last snapshot: %+v", s)
		}
	}()
	b.eventually(60*time.Second, "the fixture board settles", func() bool {
		s = b.snapshot()
		r := s.Cards[cardRetry]
		return len(r.Runs) == 1 && r.Runs[0].Outcome != "" && r.NextAttemptAt != nil &&
			strings.Contains(s.Parked[cardParked], question) && s.Cards[cardDone].State == "review" &&
			len(s.Paused) == 1 && len(s.Cards[cardGated].Runs) == 1 && s.Cards[cardGated].Runs[0].Outcome != ""
	})
	b.stop()
	b.ok("card", "mv", cardDone, "done")
	b.ok("card", "add", "--title", "Ready to go", "--state", "ready", "--spec", `{"sim":["succeeded"]}`)
}
