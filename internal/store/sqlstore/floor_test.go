package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// TestFloorWritesEveryRecord: the floor leaves what a dispatcher's
// burn-down leaves, as the store's own reads see it: every card done, one
// started and succeeded run each, a claimed, a started and a finished event
// of that run each, in that order, claimed by its workers; and it refuses a
// store with cards on it.
func TestFloorWritesEveryRecord(t *testing.T) {
	for name, dsn := range bulkBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := mustOpen(t, dsn(t))
			// 7 cards, 2 workers with batches of 2: several batches, the
			// last one short.
			st, err := s.Floor(ctx, sqlstore.FloorOptions{Cards: 7, Batch: 4, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if st.Cards != 7 || st.Workers != 2 || st.Wall <= 0 {
				t.Errorf("stats %+v, want 7 cards, 2 workers and a wall time", st)
			}
			cards, err := s.ListCards(ctx, store.CardFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cards) != 7 {
				t.Fatalf("%d cards on the board, want 7", len(cards))
			}
			nodes := map[string]bool{}
			for _, c := range cards {
				if c.State != "done" || c.Claim != nil {
					t.Errorf("card %s: state %q, claim %v; want done and released", c.ID, c.State, c.Claim)
				}
				runs, err := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != 1 || runs[0].Outcome != board.OutcomeSucceeded || runs[0].StartedAt == nil || runs[0].LogPath == "" || runs[0].Workspace == "" {
					t.Fatalf("card %s: runs %+v, want one, started with a log and a workspace, that succeeded", c.ID, runs)
				}
				nodes[runs[0].Node] = true
				evs, err := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
				if err != nil {
					t.Fatal(err)
				}
				var types []string
				for _, e := range evs {
					types = append(types, e.Type)
					if e.RunID != runs[0].ID {
						t.Errorf("card %s: %s event of run %q, want the card's run %q", c.ID, e.Type, e.RunID, runs[0].ID)
					}
				}
				if got, want := strings.Join(types, ","), board.EvClaimed+","+board.EvStarted+","+board.EvFinished; got != want {
					t.Errorf("card %s: events %s, want %s", c.ID, got, want)
				}
			}
			for n := range nodes {
				if n != "floor-1" && n != "floor-2" {
					t.Errorf("a run claimed by %q, want one of the two workers", n)
				}
			}
			if _, err := s.Floor(ctx, sqlstore.FloorOptions{Cards: 1, Batch: 1, Workers: 1}); err == nil || !strings.Contains(err.Error(), "empty scratch store") {
				t.Errorf("floor on a store with cards: %v, want a refusal naming the empty scratch store", err)
			}
		})
	}
}
