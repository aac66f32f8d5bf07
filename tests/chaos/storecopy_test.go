package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestChaosBoardCopiesAndServes: a board made by a short chaos run on
// SQLite (one serve SIGKILLed again and again, so it holds interrupted
// runs, retries, give-ups and redelivered notifications) is copied by the
// real binary SQLite → PostgreSQL → SQLite (SQLite → SQLite without a
// PostgreSQL server) with every row of every board table equal on all
// three stores. serve then runs on the final copy: the board stays settled,
// new cards continue its numbering and settle, and every chaos invariant
// holds on the copy.
func TestChaosBoardCopiesAndServes(t *testing.T) {
	src := "sqlite:" + filepath.Join(t.TempDir(), "drover.db")
	const cards, more = 15, 5
	c, _ := runChaos(t, src, plan{Nodes: 1, Duration: 12 * time.Second, KillMin: 1500 * time.Millisecond, KillMax: 2500 * time.Millisecond,
		DownMax: lease, Cards: cards, MinKills: 3, Settle: 60 * time.Second, FailPercent: 40})
	if t.Failed() {
		return
	}
	// A chaos run trips no breaker: resume the profile so agent_states holds
	// a row too, add a comment whose text is not ASCII, and collect (with
	// the default retention nothing goes) so gc_reports has its row.
	for _, args := range [][]string{{"card", "comment", "DRV-1", "copied with ünïcode and 'quotes'"}, {"agent", "resume", "sh"}, {"gc"}} {
		if _, err := c.drover(args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range c.nodes {
		c.stop(nd)
	}
	// A run without a give-up sends no notification: a pending one of the
	// test's own keeps the outbox from being empty (the comparison would
	// prove nothing for it); serve on the copy then delivers it, once.
	ensurePendingNotice(t, src)

	want := testkit.DumpBoard(t, src)
	var hops []string
	if os.Getenv(pgtest.Env) != "" {
		hops = append(hops, testkit.DSN(t, testkit.Postgres))
	} else {
		t.Logf("%s is unset: copying SQLite → SQLite only", pgtest.Env)
	}
	final := "sqlite:" + filepath.Join(t.TempDir(), "copy.db")
	hops = append(hops, final)
	from := src
	var seq int64
	for _, to := range hops {
		out, err := c.drover("--store", from, "store", "copy", "--to", to, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Tables   []sqlstore.TableSum `json:"tables"`
			EventSeq int64               `json:"event_seq"`
			Verified bool                `json:"verified"`
		}
		if err := json.Unmarshal(out, &rep); err != nil || !rep.Verified || len(rep.Tables) != len(sqlstore.BoardTables()) {
			t.Fatalf("store copy --json = %s (%v)", out, err)
		}
		seq = rep.EventSeq
		testkit.SameBoard(t, from+" → "+to, want, testkit.DumpBoard(t, to))
		from = to
	}
	if t.Failed() {
		return
	}

	// serve on the copy, with new cards for it to run.
	c.moveTo(final)
	var fresh []string
	for i := range more {
		out, err := c.drover("card", "add", "--title", fmt.Sprintf("on the copy %d", i), "--json")
		if err != nil {
			t.Fatal(err)
		}
		var cd struct {
			Identifier string `json:"identifier"`
		}
		if err := json.Unmarshal(out, &cd); err != nil {
			t.Fatalf("card add --json = %s (%v)", out, err)
		}
		fresh = append(fresh, cd.Identifier)
	}
	if fresh[0] != fmt.Sprintf("DRV-%d", cards+1) {
		t.Errorf("the first card added on the copy is %s, want DRV-%d", fresh[0], cards+1)
	}
	if err := c.waitSettled(cards+more, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	var rep report
	c.check(&rep)
	t.Logf("on the copy after serve: cards=%d runs=%d outcomes=%v states=%v violations=%d", rep.Cards, rep.Runs, rep.Outcomes, rep.States, len(rep.Violations))
	for _, v := range rep.Violations {
		t.Errorf("violation on the copy: %s", v)
	}
	if rep.Cards != cards+more {
		t.Errorf("the copy holds %d cards after serve, want %d", rep.Cards, cards+more)
	}
	st := testkit.Open(t, final)
	runs, events := 0, 0
	for _, id := range fresh {
		d, err := st.GetCard(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := st.ListRuns(t.Context(), store.RunFilter{CardID: d.ID})
		if err != nil {
			t.Fatal(err)
		}
		runs += len(rs)
		evs, err := st.ListEvents(t.Context(), store.EventFilter{CardID: d.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Seq <= seq {
				t.Errorf("%s has event %d (%s), not after the copied events' last seq %d", id, ev.Seq, ev.Type, seq)
			}
			events++
		}
	}
	if runs < more || events == 0 {
		t.Errorf("serve on the copy ran %d runs and wrote %d events for the %d new cards; want at least one run each", runs, events, more)
	}
}

// moveTo points every node's WORKFLOW.md at the store dsn (every node must
// be down), as an operator does after `drover store copy`.
func (c *cluster) moveTo(dsn string) {
	c.t.Helper()
	old, repl := fmt.Sprintf("store: %q\n", c.o.DSN), fmt.Sprintf("store: %q\n", dsn)
	for _, nd := range c.nodes {
		b, err := os.ReadFile(nd.config)
		if err != nil {
			c.t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			c.t.Fatalf("%s does not name the store %s", nd.config, c.o.DSN)
		}
		if err := os.WriteFile(nd.config, []byte(strings.Replace(string(b), old, repl, 1)), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.o.DSN = dsn
}

// ensurePendingNotice adds a pending webhook notification to the store at
// dsn when its outbox is empty.
func ensurePendingNotice(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st := testkit.Open(t, dsn)
	defer st.Close()
	if rows, err := st.ListOutbox(ctx, store.OutboxFilter{}); err != nil || len(rows) > 0 {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	card, err := st.GetCard(ctx, "DRV-1")
	if err != nil {
		t.Fatal(err)
	}
	item := store.OutboxItem{Key: card.ID + "/copy-test/commented/webhook", Channel: "webhook", Event: "commented", CardID: card.ID, Payload: []byte(`{"event":"commented"}`)}
	if err := st.Apply(ctx, store.Change{Outbox: []store.OutboxItem{item}}); err != nil {
		t.Fatal(err)
	}
}
