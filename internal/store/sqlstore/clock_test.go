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

// TestWithClock: every timestamp the store writes itself comes from the
// clock it was opened with, not from the wall clock.
func TestWithClock(t *testing.T) {
	for _, be := range testkit.Backends {
		t.Run(string(be), func(t *testing.T) {
			ctx := context.Background()
			start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
			clk := testkit.NewClock(start)
			s, err := sqlstore.Open(ctx, testkit.DSN(t, be), sqlstore.WithClock(clk.Now))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := s.CreateCard(ctx, "DRV", board.Card{Title: "t", State: "ready"}, "operator")
			if err != nil {
				t.Fatal(err)
			}
			if !c.CreatedAt.Equal(start) || !c.UpdatedAt.Equal(start) {
				t.Errorf("created %v updated %v, want both %v", c.CreatedAt, c.UpdatedAt, start)
			}
			clk.Advance(time.Minute)
			later := start.Add(time.Minute)
			c.Title = "edited"
			c.UpdatedAt = time.Time{}
			if err := s.Apply(ctx, store.Change{Card: &c,
				NewRun:     &board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: 1},
				Events:     []board.Event{{CardID: c.ID, Type: board.EvEdited}},
				Comments:   []board.Comment{{CardID: c.ID, Author: "operator", Body: "hi"}},
				Outbox:     []store.OutboxItem{{Key: "k", Channel: "webhook", Event: "x", Payload: json.RawMessage(`{}`)}},
				AgentState: &store.AgentState{Name: "p", State: "open"},
			}); err != nil {
				t.Fatal(err)
			}
			got, _ := s.GetCard(ctx, c.ID)
			runs, _ := s.ListRuns(ctx, store.RunFilter{CardID: c.ID})
			evs, _ := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
			cms, _ := s.ListComments(ctx, c.ID)
			obs, _ := s.ListOutbox(ctx, store.OutboxFilter{})
			ags, _ := s.ListAgentStates(ctx)
			if len(runs) != 1 || len(evs) != 2 || len(cms) != 1 || len(obs) != 1 || len(ags) != 1 {
				t.Fatalf("rows: %d runs, %d events, %d comments, %d outbox, %d agent states", len(runs), len(evs), len(cms), len(obs), len(ags))
			}
			for what, at := range map[string]time.Time{
				"card updated_at": got.UpdatedAt, "run claimed_at": runs[0].ClaimedAt, "event at": evs[1].At,
				"comment at": cms[0].At, "outbox created_at": obs[0].CreatedAt, "outbox next_at": obs[0].NextAt,
				"agent state updated_at": ags[0].UpdatedAt,
			} {
				if !at.Equal(later) {
					t.Errorf("%s = %v, want the store's clock %v", what, at, later)
				}
			}
			// The leadership lease lapses on the store's clock.
			if ok, err := s.TryLead(ctx, "n1", time.Hour); err != nil || !ok {
				t.Fatalf("n1 TryLead = %v, %v", ok, err)
			}
			if ok, _ := s.TryLead(ctx, "n2", time.Hour); ok {
				t.Fatal("n2 took a lease that has not lapsed")
			}
			clk.Advance(2 * time.Hour)
			if ok, _ := s.TryLead(ctx, "n2", time.Hour); !ok {
				t.Fatal("n2 could not take a lease that lapsed on the store's clock")
			}
		})
	}
}
