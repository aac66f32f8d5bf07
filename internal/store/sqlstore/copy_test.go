package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
	"github.com/drover-dev/drover/internal/testkit"
)

var boardTables = []string{"counters", "cards", "runs", "events", "comments", "outbox", "agent_states"}

// fill writes n cards with a run, comments, an outbox row and an agent
// state, using the store's own API, and deletes nothing.
func fill(t *testing.T, st *sqlstore.DB, n int) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range n {
		c, err := st.CreateCard(ctx, "DRV", board.Card{Title: fmt.Sprintf("card %d ünïcode 'quoted'", i), State: "ready",
			Labels: []string{"a", "b"}, Spec: []byte(`{"sim":["succeeded"]}`), Priority: i % 5}, "test")
		if err != nil {
			t.Fatal(err)
		}
		code := i % 3
		fin := now.Add(time.Duration(i) * time.Second)
		run := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, RetryEpoch: 1, ClaimEpoch: 1, Node: "n1", Agent: "sim",
			Outcome: board.OutcomeFailed, Kind: "agent_failed", Counted: true, ExitCode: &code, ClaimedAt: now, FinishedAt: &fin,
			TokensIn: int64(i), CostUSD: 0.125 * float64(i), LastOutput: "line\nline"}
		c.State = "blocked"
		err = st.Apply(ctx, store.Change{Card: &c, NewRun: &run,
			Events:   []board.Event{{At: now, CardID: c.ID, RunID: run.ID, Type: "routed", Actor: "n1", Data: []byte(`{"k":1}`)}},
			Comments: []board.Comment{{ID: board.NewID(), CardID: c.ID, Author: "drover", Body: "why", At: now}},
			Outbox: []store.OutboxItem{{ID: board.NewID(), Key: "k-" + c.ID, Channel: "webhook", Event: "blocked", CardID: c.ID,
				RunID: run.ID, Payload: []byte(`{"x":"y"}`), CreatedAt: now, NextAt: now}},
			AgentState: &store.AgentState{Name: "agent-" + c.Identifier + "-" + c.ID, State: "open", Until: &fin, Data: []byte(`{"hits":2}`)},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func dump(t *testing.T, st *sqlstore.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tb := range boardTables {
		rows, err := st.DumpTable(context.Background(), tb)
		if err != nil {
			t.Fatal(err)
		}
		out[tb] = rows
	}
	return out
}

func sameRows(t *testing.T, what string, a, b map[string][]string) {
	t.Helper()
	for _, tb := range boardTables {
		if len(a[tb]) == 0 {
			t.Errorf("%s: source table %s is empty; the test proves nothing for it", what, tb)
		}
		if !slices.Equal(a[tb], b[tb]) {
			t.Errorf("%s: table %s differs:\n source %d rows %q\n target %d rows %q", what, tb, len(a[tb]), a[tb], len(b[tb]), b[tb])
		}
	}
}

func copyStore(t *testing.T, src, dst *sqlstore.DB) sqlstore.CopyReport {
	t.Helper()
	rep, err := sqlstore.Copy(context.Background(), src, dst, sqlstore.CopyOptions{})
	if err != nil {
		t.Fatalf("copy %s → %s: %v", src.Backend(), dst.Backend(), err)
	}
	return rep
}

// A board copied SQLite → PostgreSQL → SQLite (SQLite → SQLite without a
// PostgreSQL server) has every row of every table equal, and new events
// and identifiers continue after the copied ones.
func TestCopyRoundTripsEveryRow(t *testing.T) {
	ctx := context.Background()
	a := testkit.Store(t, testkit.SQLite)
	fill(t, a, 450) // more than one insert batch
	want := dump(t, a)
	mid := a
	if os.Getenv(pgtest.Env) != "" {
		pg := testkit.Store(t, testkit.Postgres)
		rep := copyStore(t, a, pg)
		sameRows(t, "sqlite → postgres", want, dump(t, pg))
		if rep.EventSeq != 900 {
			t.Errorf("event seq = %d, want 900 (a created and a routed event per card)", rep.EventSeq)
		}
		mid = pg
	}
	c := testkit.Store(t, testkit.SQLite)
	copyStore(t, mid, c)
	sameRows(t, mid.Backend()+" → sqlite", want, dump(t, c))

	for _, st := range []*sqlstore.DB{mid, c} {
		card, err := st.CreateCard(ctx, "DRV", board.Card{Title: "after", State: "ready"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if card.Identifier != "DRV-451" {
			t.Errorf("%s: next identifier = %s, want DRV-451", st.Backend(), card.Identifier)
		}
		evs, err := st.ListEvents(ctx, store.EventFilter{CardID: card.ID})
		if err != nil || len(evs) != 1 || evs[0].Seq <= 900 {
			t.Errorf("%s: the new card's event = %+v (%v), want one with seq > 900", st.Backend(), evs, err)
		}
	}
}

// Copy refuses a target that holds a board and names what it holds.
func TestCopyRefusesNonEmptyTarget(t *testing.T) {
	a, b := testkit.Store(t, testkit.SQLite), testkit.Store(t, testkit.SQLite)
	fill(t, a, 2)
	fill(t, b, 1)
	before := dump(t, b)
	_, err := sqlstore.Copy(context.Background(), a, b, sqlstore.CopyOptions{})
	if !errors.Is(err, sqlstore.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "cards 1") {
		t.Fatalf("err = %v, want ErrTargetNotEmpty naming cards 1", err)
	}
	sameRows(t, "refused target", before, dump(t, b))
}

// A copy that fails part way leaves the target empty: one transaction.
func TestCopyIsAllOrNothing(t *testing.T) {
	a, b := testkit.Store(t, testkit.SQLite), testkit.Store(t, testkit.SQLite)
	fill(t, a, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := sqlstore.Copy(ctx, a, b, sqlstore.CopyOptions{Progress: func(table string, done, total int64) {
		if table == "events" {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("a copy cancelled part way succeeded")
	}
	for tb, rows := range dump(t, b) {
		if len(rows) != 0 {
			t.Errorf("after a failed copy the target's %s holds %d rows, want none", tb, len(rows))
		}
	}
}

// Backup writes a store that checks out, refuses to overwrite without force,
// and Restore puts it back, keeping the old store beside it.
func TestBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := testkit.Open(t, "sqlite:"+filepath.Join(dir, "drover.db"))
	fill(t, st, 5)
	want := dump(t, st)
	bk := filepath.Join(dir, "b.db")
	info, err := st.Backup(ctx, bk, false)
	if err != nil {
		t.Fatal(err)
	}
	if info.SchemaVersion < 1 || info.Tables[1].Table != "cards" || info.Tables[1].Rows != 5 {
		t.Fatalf("backup info = %+v", info)
	}
	if _, err := st.Backup(ctx, bk, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second backup to the same file: err = %v, want a refusal naming --force", err)
	}
	if _, err := st.Backup(ctx, bk, true); err != nil {
		t.Fatalf("backup --force: %v", err)
	}
	fill(t, st, 1) // the store moves on after the backup
	st.Close()

	target := filepath.Join(dir, "drover.db")
	rep, err := sqlstore.Restore(ctx, bk, target)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Previous == "" {
		t.Fatal("restore kept no copy of the store it replaced")
	}
	sameRows(t, "restored", want, dump(t, testkit.Open(t, "sqlite:"+target)))
	if old := dump(t, testkit.Open(t, "sqlite:"+rep.Previous)); len(old["cards"]) != 6 {
		t.Errorf("the kept store %s has %d cards, want 6", rep.Previous, len(old["cards"]))
	}
}

// Restore refuses a file that is not a drover store, and one from a newer drover.
func TestRestoreChecksTheFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	other := testkit.Open(t, "sqlite:"+junk)
	if err := other.ExecForTest(`DROP TABLE goose_db_version`); err != nil {
		t.Fatal(err)
	}
	other.Close()
	if _, err := sqlstore.Restore(ctx, junk, filepath.Join(dir, "t.db")); err == nil || !strings.Contains(err.Error(), "not a drover store") {
		t.Fatalf("restore of a file without a schema table: err = %v", err)
	}
	newer := filepath.Join(dir, "newer.db")
	n := testkit.Open(t, "sqlite:"+newer)
	if err := n.ExecForTest(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (999, 1)`); err != nil {
		t.Fatal(err)
	}
	n.Close()
	_, err := sqlstore.Restore(ctx, newer, filepath.Join(dir, "t.db"))
	if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "999") {
		t.Fatalf("restore of a newer store: err = %v, want ErrSchemaTooNew naming 999", err)
	}
}

// Backup and Restore refuse PostgreSQL and say to use pg_dump.
func TestBackupRefusesPostgres(t *testing.T) {
	pg := testkit.Store(t, testkit.Postgres)
	if _, err := pg.Backup(context.Background(), filepath.Join(t.TempDir(), "x.db"), false); !errors.Is(err, sqlstore.ErrNotSQLite) || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("err = %v, want ErrNotSQLite naming pg_dump", err)
	}
}
