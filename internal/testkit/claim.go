package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// Claim puts c in progress under a claim of node's, with an open first run
// of agent, as a dispatcher's claim would, and returns both as stored.
func Claim(t testing.TB, st store.Store, c board.Card, node, agent string) (board.Card, board.Run) {
	t.Helper()
	c.Claim = &board.Claim{Owner: node, Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	c.State = "in_progress"
	r := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, ClaimEpoch: c.Claim.Epoch, Node: node, Agent: agent}
	if err := st.Apply(context.Background(), store.Change{Card: &c, NewRun: &r}); err != nil {
		t.Fatalf("testkit: claiming %s: %v", c.Identifier, err)
	}
	return c, r
}
