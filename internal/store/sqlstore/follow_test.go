package sqlstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/testkit"
)

// A follower pages the event log by seq. Two processes write events; the one
// that drew the lower seq is held just before its commit while the other
// commits. The follower must still see every event exactly once.
func testFollowerOutOfOrderCommit(t *testing.T, dsn string) {
	ctx := context.Background()
	open := func() *sqlstore.DB {
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	slow, fast, reader := open(), open(), open()
	entered, release := make(chan struct{}), make(chan struct{})
	slow.HoldNextCommitForTest(entered, release)
	// Different prefixes: the writers share no counter row, only the log.
	add := func(s store.Store, prefix string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := s.CreateCard(ctx, prefix, board.Card{Title: prefix, State: "ready", Spec: json.RawMessage(`{}`)}, "operator")
			done <- err
		}()
		return done
	}
	slowDone := add(slow, "SLOW")
	<-entered
	fastDone := add(fast, "FAST")
	// Give the fast writer time to commit if nothing orders it after the slow one.
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
		fastDone = nil
	case <-time.After(500 * time.Millisecond):
	}
	seen := map[int64]int{}
	var cursor int64
	follow := func() {
		evs, err := reader.ListEvents(ctx, store.EventFilter{SinceSeq: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			seen[e.Seq]++
			cursor = e.Seq
		}
	}
	follow()
	close(release)
	for _, done := range []<-chan error{slowDone, fastDone} {
		if done == nil {
			continue
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	follow()
	all, err := reader.ListEvents(ctx, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("the log holds %d events, want 2", len(all))
	}
	for _, e := range all {
		if seen[e.Seq] != 1 {
			t.Errorf("the follower saw event %d (%s) %d times, want once (it saw %v)", e.Seq, e.Reason, seen[e.Seq], seen)
		}
	}
}

func TestFollowerOutOfOrderCommitSQLite(t *testing.T) {
	testFollowerOutOfOrderCommit(t, testkit.DSN(t, testkit.SQLite))
}

func TestFollowerOutOfOrderCommitPostgres(t *testing.T) {
	testFollowerOutOfOrderCommit(t, testkit.DSN(t, testkit.Postgres))
}
