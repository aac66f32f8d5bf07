package sqlstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestCorruptJSONColumn: a JSON column that no longer decodes makes the read
// fail with an error naming the table, the column and the row, instead of
// coming back as an empty field.
func TestCorruptJSONColumn(t *testing.T) {
	for _, be := range testkit.Backends {
		t.Run(string(be), func(t *testing.T) {
			ctx := context.Background()
			for _, tc := range []struct {
				table, col string
				read       func(s store.Store, c board.Card) error
			}{
				{"cards", "labels", getCard},
				{"cards", "blocked_by", listCards},
				{"cards", "spec", getCard},
				{"cards", "block_reason", listCards},
				{"cards", "gave_up", getCard},
				{"events", "data", func(s store.Store, c board.Card) error {
					_, err := s.ListEvents(ctx, store.EventFilter{CardID: c.ID})
					return err
				}},
				{"outbox", "payload", func(s store.Store, _ board.Card) error {
					_, err := s.ListOutbox(ctx, store.OutboxFilter{})
					return err
				}},
				{"agent_states", "data", func(s store.Store, _ board.Card) error {
					_, err := s.ListAgentStates(ctx)
					return err
				}},
				{"nodes", "status", func(s store.Store, _ board.Card) error {
					_, err := s.ListNodes(ctx)
					return err
				}},
			} {
				t.Run(tc.table+"."+tc.col, func(t *testing.T) {
					s := testkit.Store(t, be)
					c, err := s.CreateCard(ctx, "DRV", board.Card{Title: "c", State: "ready"}, "operator")
					if err != nil {
						t.Fatal(err)
					}
					err = s.Apply(ctx, store.Change{
						Outbox:     []store.OutboxItem{{ID: "ob1", Key: "k", Channel: "webhook", Event: "x", Payload: json.RawMessage(`{}`)}},
						AgentState: &store.AgentState{Name: "claude", State: "open", Data: json.RawMessage(`{}`)},
					})
					if err != nil {
						t.Fatal(err)
					}
					now := time.Now()
					if err := s.TouchNode(ctx, store.Node{Name: "n1", StartedAt: now, SeenAt: now}); err != nil {
						t.Fatal(err)
					}
					if err := tc.read(s, c); err != nil {
						t.Fatalf("before corruption: %v", err)
					}
					// The row to corrupt, and the id its error must name (an
					// event is named by its sequence number: the card's
					// "created" event is the first).
					row := map[string][2]string{
						"cards":        {"id = '" + c.ID + "'", c.ID},
						"events":       {"card_id = '" + c.ID + "'", "1"},
						"outbox":       {"id = 'ob1'", "ob1"},
						"agent_states": {"name = 'claude'", "claude"},
						"nodes":        {"name = 'n1'", "n1"},
					}[tc.table]
					where, id := row[0], row[1]
					if err := s.ExecForTest(`UPDATE ` + tc.table + ` SET ` + tc.col + ` = '{"half":' WHERE ` + where); err != nil {
						t.Fatal(err)
					}
					err = tc.read(s, c)
					if err == nil {
						t.Fatal("a corrupt JSON column was read without an error")
					}
					for _, want := range []string{tc.table + "." + tc.col, id} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("error %q does not name %q", err, want)
						}
					}
				})
			}
		})
	}
}

func getCard(s store.Store, c board.Card) error {
	_, err := s.GetCard(context.Background(), c.ID)
	return err
}

func listCards(s store.Store, _ board.Card) error {
	_, err := s.ListCards(context.Background(), store.CardFilter{})
	return err
}
