package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// testRunChanges: what a run did to its card's branch (workspace.git) is
// written with the run's end and read back whole, by GetRun and ListRuns;
// a run without it reads back nil.
func testRunChanges(t *testing.T, s store.Store) {
	c := mkCard(t, s, "g", "ready")
	cur, _ := s.GetCard(ctx, c.ID)
	cur.Claim = &board.Claim{Owner: "n", Epoch: cur.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	run := board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: cur.RetryEpoch, ClaimEpoch: cur.Claim.Epoch, Agent: "claude"}
	must(t, s.Apply(ctx, store.Change{Card: &cur, NewRun: &run}))
	got, _ := s.GetRun(ctx, run.ID)
	if got.Changes != nil {
		t.Fatalf("a new run has changes %+v", got.Changes)
	}
	fin := time.Now()
	want := &board.Changes{Branch: "drover/g-1-ünï", Base: "aaaa", Head: "cccc", Commits: []string{"bbbb", "cccc"},
		Files: 3, Insertions: 40, Deletions: 2, Dirty: true, CommittedBy: "cccc", Pushed: "cccc"}
	got.Outcome, got.Kind, got.FinishedAt, got.Changes = board.OutcomeSucceeded, "succeeded", &fin, want
	must(t, s.Apply(ctx, store.Change{Run: &got, RunMustBeOpen: true}))
	back, err := s.GetRun(ctx, run.ID)
	must(t, err)
	if !reflect.DeepEqual(back.Changes, want) {
		t.Fatalf("changes written %+v, read back %+v", want, back.Changes)
	}
	runs, err := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	must(t, err)
	if len(runs) != 1 || !reflect.DeepEqual(runs[0].Changes, want) {
		t.Fatalf("ListRuns of the card: %+v", runs)
	}
	// Nothing changed is recorded too: no commits is an empty list, not nil.
	none := &board.Changes{Branch: "drover/g-1", Base: "aaaa", Head: "aaaa", Commits: []string{}}
	back.Changes = none
	must(t, s.Apply(ctx, store.Change{Run: &back}))
	if again, _ := s.GetRun(ctx, run.ID); again.Changes == nil || again.Changes.Changed() || again.Changes.Commits == nil {
		t.Fatalf("an attempt that changed nothing reads back %+v", again.Changes)
	}
}
