package pullflow

import (
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
)

func TestNotices(t *testing.T) {
	cfg := &config.Config{Board: board.Default()}
	blocked, _ := cfg.Board.First(board.RoleBlocked)
	eligible, _ := cfg.Board.First(board.RoleEligible)
	review, _ := cfg.Board.First(board.RoleCompleted)
	card := board.Card{ID: "c1", Identifier: "DRV-1", State: review.Name, Version: 3}
	pr := &board.PullRequest{Number: 12}
	moved := func(state string, mut ...func(*board.Card)) *board.Card {
		n := card
		n.State, n.PullRequest = state, pr
		for _, m := range mut {
			m(&n)
		}
		return &n
	}
	reason := &board.BlockReason{What: "PR #12 was closed without merging by bob"}
	for _, tc := range []struct {
		name      string
		from      board.Card
		ch        store.Change
		event     string
		key, what string
	}{
		{name: "closed: blocked, once per card version", from: card,
			ch:    store.Change{Card: moved(blocked.Name, func(c *board.Card) { c.BlockReason = reason })},
			event: "blocked", key: "c1/pull-12-v3/blocked", what: reason.What},
		{name: "a failing check past max_attempts: gave_up on its run", from: card,
			ch: store.Change{Card: moved(blocked.Name, func(c *board.Card) { c.GaveUp = &board.GaveUp{Attempts: 3}; c.BlockReason = reason }),
				Run: &board.Run{ID: "r9", Agent: "sim"}},
			event: "gave_up", key: "c1/r9/gave_up", what: reason.What},
		{name: "changes requested: back to eligible, nothing to notify", from: card, ch: store.Change{Card: moved(eligible.Name)}},
		{name: "a read that changes nothing", from: card, ch: store.Change{Card: moved(review.Name)}},
		{name: "already blocked: no second message", from: *moved(blocked.Name), ch: store.Change{Card: moved(blocked.Name)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := notices(cfg, tc.from, tc.ch, time.Now())
			if tc.event == "" {
				if len(ms) != 0 {
					t.Fatalf("notices = %+v, want none", ms)
				}
				return
			}
			if len(ms) != 1 || ms[0].Event != tc.event || ms[0].Key != tc.key || ms[0].Card == nil || ms[0].Card.Identifier != "DRV-1" ||
				ms[0].Reason == nil || ms[0].Reason.What != tc.what {
				t.Fatalf("notices = %+v, want one %s keyed %s", ms, tc.event, tc.key)
			}
		})
	}
}
