package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/storetest/pgtest"
)

// bulkBackends are the stores the fast path's tests run on (PostgreSQL
// when DROVER_TEST_POSTGRES_URL is set; pgtest skips it otherwise).
var bulkBackends = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "d.db") },
	"postgres": func(t *testing.T) string { return pgtest.DSN(t) },
}

// routeOf is the routing of a claim change's run as a dispatcher writes
// it: the card released to done under the claim's guard, the run succeeded
// (only while open), a finished event.
func routeOf(claim store.Change) store.Change {
	c := *claim.Card
	held := *c.Claim
	c.Version++
	c.Claim, c.State = nil, "done"
	r := *claim.NewRun
	r.Outcome = board.OutcomeSucceeded
	return store.Change{Card: &c, ClaimGuard: &held, Run: &r, RunMustBeOpen: true,
		Events: []board.Event{{CardID: c.ID, RunID: r.ID, Type: board.EvFinished, Actor: "n", Reason: "succeeded"}}}
}

// TestApplyAllFastPath: a batch of claims with no refusal is written by the
// fast path; a batch with one refusal tries it, falls back, and the
// savepoint path writes the rest; a batch with blockers to check never
// tries it.
func TestApplyAllFastPath(t *testing.T) {
	for name, dsn := range bulkBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := mustOpen(t, dsn(t))
			claims := func(n int, staleAt int) []store.Change {
				var chs []store.Change
				for i := 0; i < n; i++ {
					c, err := s.CreateCard(ctx, "F", board.Card{Title: fmt.Sprint(i), State: "ready"}, "t")
					if err != nil {
						t.Fatal(err)
					}
					if i == staleAt {
						c.Version--
					}
					c.Claim = &board.Claim{Owner: "n", Epoch: 2, LeaseUntil: time.Now().Add(time.Minute)}
					chs = append(chs, store.Change{Card: &c, NewRun: &board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: 1, ClaimEpoch: 2},
						Events: []board.Event{{CardID: c.ID, Type: board.EvClaimed, Actor: "n"}}})
				}
				return chs
			}
			check := func(chs []store.Change, wantTried, wantWritten int64, wantRefused int) {
				t.Helper()
				t0, w0 := s.BulkStatsForTest()
				refused, err := s.ApplyAll(ctx, chs)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range refused {
					if e != nil {
						n++
					}
				}
				t1, w1 := s.BulkStatsForTest()
				if t1-t0 != wantTried || w1-w0 != wantWritten || n != wantRefused {
					t.Fatalf("fast path tried %d written %d, %d refused; want %d, %d, %d", t1-t0, w1-w0, n, wantTried, wantWritten, wantRefused)
				}
			}
			cl := claims(5, -1)
			check(cl, 1, 1, 0)
			// Their routings, with comments and outbox rows and progress.
			var routes []store.Change
			for i, ch := range cl {
				rt := routeOf(ch)
				rt.Comments = []board.Comment{{CardID: rt.Card.ID, Author: "n", Body: "x"}}
				rt.Outbox = []store.OutboxItem{{Key: fmt.Sprint("k", i), Channel: "webhook", CardID: rt.Card.ID, Payload: []byte(`{}`)}}
				routes = append(routes, rt)
			}
			check(routes, 1, 1, 0)
			check([]store.Change{{Progress: []store.RunProgress{{RunID: cl[0].NewRun.ID, LastOutput: "x"}}}}, 1, 1, 0)
			check(claims(5, 2), 1, 0, 1)
			chs := claims(2, -1)
			chs[0].CheckBlockers, chs[0].Card.BlockedBy = true, []string{chs[1].Card.ID}
			check(chs, 0, 0, 0)
		})
	}
}

// A fast-path batch whose commit reply is lost (the database committed,
// the call failed) is reported as failed and not written again by the
// savepoint path: its events and comments, which no guard protects, are in
// the store once.
func TestApplyAllLostCommitReplyWritesOnce(t *testing.T) {
	for name, dsn := range bulkBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := mustOpen(t, dsn(t))
			var chs []store.Change
			var ids []string
			for i := range 3 {
				c, err := s.CreateCard(ctx, "L", board.Card{Title: fmt.Sprint(i), State: "ready"}, "t")
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
				chs = append(chs, store.Change{Events: []board.Event{{CardID: c.ID, Type: board.EvCommented, Actor: "agent", Reason: "note"}},
					Comments: []board.Comment{{CardID: c.ID, Author: "agent", Body: "note"}}})
			}
			s.LoseNextCommitReplyForTest(errors.New("connection reset by peer"))
			if _, err := s.ApplyAll(ctx, chs); err == nil {
				t.Fatal("ApplyAll with a lost commit reply reported success")
			}
			for _, id := range ids {
				cs, err := s.ListComments(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				all, err := s.ListEvents(ctx, store.EventFilter{CardID: id})
				if err != nil {
					t.Fatal(err)
				}
				var es []board.Event
				for _, e := range all {
					if e.Type == board.EvCommented {
						es = append(es, e)
					}
				}
				if len(cs) != 1 || len(es) != 1 {
					t.Errorf("card %s: %d comments and %d comment events after one batch, want 1 and 1", id, len(cs), len(es))
				}
			}
		})
	}
}
