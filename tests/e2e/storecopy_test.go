package e2e_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
	"github.com/drover-dev/drover/internal/testkit"
)

type copyReport struct {
	Tables []struct {
		Table    string `json:"table"`
		Rows     int64  `json:"rows"`
		Checksum string `json:"checksum"`
	} `json:"tables"`
	EventSeq int64 `json:"event_seq"`
	Verified bool  `json:"verified"`
}

// settledStates are where a card rests with no serve work left.
var settledStates = []string{"review", "blocked", "done", "cancelled", "backlog"}

func allSettled(e *env, ids []string) bool {
	for _, id := range ids {
		if !slices.Contains(settledStates, e.card(id).State) {
			return false
		}
	}
	return true
}

// A board made by a real serve (retries, a give-up with its notification,
// a parked question, comments, a breaker) is copied SQLite → PostgreSQL →
// SQLite (SQLite → SQLite without a PostgreSQL server) with every row of
// every table equal; serve runs on the final copy and settles its cards.
func TestStoreCopyRoundTripsABoardThatServes(t *testing.T) {
	rcv := testkit.NewReceiver(t)
	w := wf{Default: "sim", MaxConcurrent: 3, Poll: "100ms", Policy: "  max_attempts: 2\n", Notify: notifyYAML(rcv)}
	e := newEnv(t, w, "", testkit.SQLite)
	ok := e.addCard("succeeds", "--spec", `{"sim":["succeeded"]}`)
	retried := e.addCard("fails once", "--spec", `{"sim":["agent_failed","succeeded"]}`)
	gaveUp := e.addCard("gives up", "--spec", `{"sim":["agent_failed"]}`)
	parked := e.addCard("asks", "--spec", `{"sim":["input_required","succeeded"],"sim_question":"which branch?"}`)
	limited := e.addCard("rate limited once", "--spec", `{"sim":["rate_limited","succeeded"]}`)
	later := e.addCard("waits in backlog", "--state", "backlog", "--spec", `{"sim":["succeeded"]}`)
	e.ok("card", "comment", ok.Identifier, "a comment with ünïcode and 'quotes'")
	ids := []string{ok.Identifier, retried.Identifier, gaveUp.Identifier, parked.Identifier, limited.Identifier, later.Identifier}

	e.start()
	eventually(t, 60*time.Second, "the board to settle with the question parked", func() bool {
		return e.card(parked.Identifier).State == "awaiting_input" && allSettled(e, slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == parked.Identifier }))
	})
	eventually(t, 20*time.Second, "the give-up notification", func() bool { return mentioning(rcv, "gave_up", gaveUp.Identifier) >= 1 })

	// A live serve on the source is refused, named.
	mid := filepath.Join(e.dir, "refused.db")
	_, errOut, code := e.drover(nil, "store", "copy", "--to", "sqlite:"+mid)
	if code != 1 || !strings.Contains(errOut, "live") || !strings.Contains(errOut, "node") || !strings.Contains(errOut, "stop it") {
		t.Fatalf("copy beside a live serve: exit %d, stderr %q; want exit 1 naming the live node and how to stop it", code, errOut)
	}
	e.kill(syscall.SIGTERM)
	// A collection (nothing is old enough to go) leaves its report, which
	// the copy carries too.
	if _, errOut, code := e.drover(nil, "gc"); code != 0 {
		t.Fatalf("drover gc: exit %d, %s", code, errOut)
	}

	src := "sqlite:" + filepath.Join(e.dir, ".drover", "drover.db")
	want := testkit.DumpBoard(t, src)
	hops := []string{}
	if os.Getenv(pgtest.Env) != "" {
		hops = append(hops, testkit.DSN(t, testkit.Postgres))
	}
	final := "sqlite:" + filepath.Join(e.dir, "final.db")
	hops = append(hops, final)
	from := src
	var first copyReport
	for i, to := range hops {
		out, errOut, code := e.drover(nil, "--store", from, "store", "copy", "--to", to, "--json")
		if code != 0 {
			t.Fatalf("store copy %s → %s: exit %d\n%s", from, to, code, errOut)
		}
		if !strings.Contains(errOut, "store copy: events") {
			t.Errorf("store copy printed no progress on stderr: %q", errOut)
		}
		var rep copyReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.Verified || len(rep.Tables) != len(sqlstore.BoardTables()) {
			t.Fatalf("store copy --json = %s (%v)", out, err)
		}
		if i == 0 {
			first = rep
		} else if fmt.Sprint(rep.Tables) != fmt.Sprint(first.Tables) {
			t.Errorf("checksums changed between hops:\n%v\n%v", first.Tables, rep.Tables)
		}
		testkit.SameBoard(t, from+" → "+to, want, testkit.DumpBoard(t, to))
		from = to
	}
	// A second copy into the now non-empty target is refused.
	if _, errOut, code := e.drover(nil, "--store", src, "store", "copy", "--to", final); code != 1 || !strings.Contains(errOut, "not empty") || !strings.Contains(errOut, "cards 6") {
		t.Fatalf("copy into a non-empty target: exit %d, stderr %q", code, errOut)
	}

	// serve on the copy: the parked card is answered, the backlog card
	// released; both settle, and new cards continue the numbering.
	e.dsn = final
	e.ok("card", "answer", parked.Identifier, "main")
	e.ok("card", "mv", later.Identifier, "ready")
	fresh := e.addCard("added on the copy", "--spec", `{"sim":["succeeded"]}`)
	if fresh.Identifier != "DRV-7" {
		t.Errorf("the first card on the copy is %s, want DRV-7", fresh.Identifier)
	}
	e.start()
	eventually(t, 60*time.Second, "the copy's cards to settle", func() bool {
		return e.card(parked.Identifier).State == "review" && e.card(later.Identifier).State == "review" && e.card(fresh.Identifier).State == "review"
	})
	e.kill(syscall.SIGTERM)
	evs := e.events(fresh.Identifier)
	if len(evs) == 0 || evs[0].Seq <= first.EventSeq {
		t.Errorf("the copy's new events start at seq %v, want after %d", evs, first.EventSeq)
	}
	if got := e.card(gaveUp.Identifier); got.State != "blocked" || len(got.GaveUp) == 0 || string(got.GaveUp) == "null" {
		t.Errorf("the given-up card on the copy = %s %s, want blocked with its give-up stamp", got.State, got.GaveUp)
	}
}

// integrity is PRAGMA integrity_check's answer for the SQLite file at path,
// read without drover's code.
func integrity(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func countOf(t *testing.T, path, query string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// drover backup during a busy serve writes a store that passes
// integrity_check with consistent counts, and serves; restore refuses
// while serve is live and replaces the store once it is stopped.
func TestBackupDuringBusyServeAndRestore(t *testing.T) {
	w := wf{Default: "sim", MaxConcurrent: 4, Poll: "100ms"}
	e := newEnv(t, w, "", testkit.SQLite)
	var ids []string
	add := func(i int) {
		spec := `{"sim":["succeeded"],"sim_delay":"300ms"}`
		if i%3 == 0 {
			spec = `{"sim":["agent_failed","succeeded"],"sim_delay":"200ms"}`
		}
		ids = append(ids, e.addCard(fmt.Sprintf("busy %d", i), "--spec", spec).Identifier)
	}
	for i := range 8 {
		add(i)
	}
	e.start()
	eventually(t, 30*time.Second, "runs in flight", func() bool {
		var rs []run
		e.jsonOf(&rs, "runs")
		return slices.ContainsFunc(rs, func(r run) bool { return r.Outcome == "" })
	})
	for i := 8; i < 14; i++ { // the stream goes on while the backup is taken
		add(i)
	}
	bk := filepath.Join(e.dir, "backup.db")
	out := e.ok("backup", bk, "--json")
	for i := 14; i < 18; i++ {
		add(i)
	}
	var info struct {
		SchemaVersion int64 `json:"schema_version"`
		Tables        []struct {
			Table string `json:"table"`
			Rows  int    `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.SchemaVersion < 1 {
		t.Fatalf("backup --json = %s (%v)", out, err)
	}
	if v := integrity(t, bk); v != "ok" {
		t.Fatalf("integrity_check on the backup = %q", v)
	}
	cards := countOf(t, bk, `SELECT COUNT(*) FROM cards`)
	if created := countOf(t, bk, `SELECT COUNT(*) FROM events WHERE type = 'created'`); cards < 8 || created != cards {
		t.Errorf("backup holds %d cards and %d created events; want at least 8, one each", cards, created)
	}
	if orphans := countOf(t, bk, `SELECT COUNT(*) FROM runs WHERE card_id NOT IN (SELECT id FROM cards)`); orphans != 0 {
		t.Errorf("backup holds %d runs of cards it does not hold", orphans)
	}
	for _, tb := range info.Tables {
		if got := countOf(t, bk, "SELECT COUNT(*) FROM "+tb.Table); got != tb.Rows {
			t.Errorf("backup reported %d %s, the file holds %d", tb.Rows, tb.Table, got)
		}
	}
	if _, errOut, code := e.drover(nil, "backup", bk); code == 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("backup over an existing file: exit %d, stderr %q; want a refusal naming --force", code, errOut)
	}
	if _, errOut, code := e.drover(nil, "restore", bk); code != 1 || !strings.Contains(errOut, "live") {
		t.Fatalf("restore beside a live serve: exit %d, stderr %q; want exit 1 naming the live serve", code, errOut)
	}
	eventually(t, 60*time.Second, "the stream to settle", func() bool { return allSettled(e, ids) })
	e.kill(syscall.SIGTERM)

	out = e.ok("restore", bk)
	if !strings.Contains(out, ".bak-") {
		t.Errorf("restore did not say where the replaced store went: %q", out)
	}
	var restored []card
	e.jsonOf(&restored, "card", "ls")
	if len(restored) != cards {
		t.Fatalf("after restore the board holds %d cards, want the backup's %d", len(restored), cards)
	}
	e.start()
	eventually(t, 60*time.Second, "the restored board to settle", func() bool { return allSettled(e, ids[:cards]) })
	e.kill(syscall.SIGTERM)
	for _, c := range ids[:cards] {
		if st := e.card(c).State; st != "review" {
			t.Errorf("%s on the restored store is %s, want review", c, st)
		}
	}
}
