package chaos_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// leader reads the housekeeping leader's lease row.
func leader(t *testing.T, db *sql.DB) (string, time.Time) {
	t.Helper()
	var node string
	var until int64
	err := db.QueryRow(`SELECT node, lease_until FROM leader WHERE id = 1`).Scan(&node, &until)
	if err == sql.ErrNoRows {
		return "", time.Time{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return node, time.UnixMilli(until)
}

// TestLeaderFailover kills the leader while every process runs agents:
// another process takes leadership within a couple of lease periods and
// recovers the dead leader's expired claims (runs interrupted, claims
// cleared, cards run again elsewhere).
func TestLeaderFailover(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	c := newCluster(t, clusterOpts{DSN: dsn, Nodes: 3, Slots: 3, MinSleepMS: 8000, MaxSleepMS: 2000, FailPercent: 0})
	for _, nd := range c.nodes {
		c.start(nd)
	}
	if err := c.addCards(9); err != nil {
		t.Fatal(err)
	}
	st, err := c.openStore()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()

	// Wait until all nine run (three per node) and a leader is in place.
	var lead string
	var claimed []board.Card
	waitFor(t, 20*time.Second, "nine cards claimed and a leader", func() bool {
		lead, _ = leader(t, db)
		claimed, err = st.ListCards(ctx, store.CardFilter{Claimed: store.Bool(true)})
		return err == nil && len(claimed) == 9 && lead != ""
	}, func() string { return fmt.Sprintf("leader %q, %d claimed, err %v", lead, len(claimed), err) })
	var victim *node
	for _, nd := range c.nodes {
		if nd.name == lead {
			victim = nd
		}
	}
	if victim == nil {
		t.Fatalf("leader %q is none of the nodes", lead)
	}
	orphans := map[string]board.Claim{}
	for _, cd := range claimed {
		if cd.Claim.Owner == lead {
			orphans[cd.ID] = *cd.Claim
		}
	}
	if len(orphans) == 0 {
		t.Fatalf("the leader %s holds no claims", lead)
	}
	killed := time.Now()
	c.kill(victim)

	// A new leader within a couple of lease periods.
	var next string
	waitFor(t, 2*lease+2*time.Second, "a new leader", func() bool {
		next, _ = leader(t, db)
		return next != "" && next != lead
	}, func() string { return "leader still " + next })
	took := time.Since(killed)
	t.Logf("leader %s killed; %s leads after %s (lease %s)", lead, next, took.Round(10*time.Millisecond), lease)

	// The dead leader's claims are recovered: cleared (or re-claimed by a
	// live node), its runs interrupted, and the cards run again elsewhere.
	waitFor(t, lease+3*time.Second, "the dead leader's claims recovered", func() bool {
		for id := range orphans {
			cd, err := st.GetCard(ctx, id)
			if err != nil || (cd.Claim != nil && cd.Claim.Owner == lead) {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprint(orphans) })
	t.Logf("claims of %s recovered %s after the kill", lead, time.Since(killed).Round(10*time.Millisecond))
	for id, cl := range orphans {
		runs, err := st.ListRuns(ctx, store.RunFilter{CardID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.ClaimEpoch == cl.Epoch && r.Outcome != board.OutcomeInterrupted {
				t.Errorf("run %s of the dead leader's claim on %s: outcome %q, want interrupted", r.ID, id, r.Outcome)
			}
		}
	}
	if err := c.waitSettled(9, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	var rep report
	c.check(&rep)
	for _, v := range rep.Violations {
		t.Errorf("violation: %s", v)
	}
	for id := range orphans {
		cd, _ := st.GetCard(ctx, id)
		runs, _ := st.ListRuns(ctx, store.RunFilter{CardID: id})
		rerun := false
		for _, r := range runs {
			if r.Node != lead && r.Outcome == board.OutcomeSucceeded {
				rerun = true
			}
		}
		if !rerun && c.cfg.Board.RoleOf(cd.State) != board.RoleCompleted {
			t.Errorf("%s was not run again after its owner died: %s, runs %+v", cd.Identifier, cd.State, runs)
		}
	}
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", limit, what, state())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
