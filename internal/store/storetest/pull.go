package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// testCardPull: a card's pull request is written with a card change and
// read back whole by GetCard and ListCards; a card without one reads nil,
// and a stale version's write of it is refused like any card write.
func testCardPull(t *testing.T, s store.Store) {
	c := mkCard(t, s, "pr", "review")
	if c.PullRequest != nil {
		t.Fatalf("a new card has a pull request %+v", c.PullRequest)
	}
	cur, _ := s.GetCard(ctx, c.ID)
	at := time.UnixMilli(time.Now().UnixMilli()).UTC()
	want := &board.PullRequest{Number: 12, URL: "https://github.com/acme/app/pull/12", Branch: "drover/pr-1-ünï",
		State: board.PullOpen, HeadSHA: "cccc", CheckedAt: &at, ETag: `W/"abc"`,
		Handled: board.PullHandled{Review: 7, Comment: 9, Checks: []int64{3, 4}}}
	stale := cur
	cur.PullRequest = want
	must(t, s.Apply(ctx, store.Change{Card: &cur}))
	back, err := s.GetCard(ctx, c.ID)
	must(t, err)
	if back.PullRequest == nil || !back.PullRequest.CheckedAt.Equal(at) {
		t.Fatalf("pull request written %+v, read back %+v", want, back.PullRequest)
	}
	got := *back.PullRequest
	got.CheckedAt = &at
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("pull request written %+v, read back %+v", want, got)
	}
	cards, err := s.ListCards(ctx, store.CardFilter{IDs: []string{c.ID}})
	must(t, err)
	if len(cards) != 1 || cards[0].PullRequest == nil || cards[0].PullRequest.Number != 12 {
		t.Fatalf("ListCards of the card: %+v", cards)
	}
	stale.PullRequest = &board.PullRequest{Number: 99}
	if err := s.Apply(ctx, store.Change{Card: &stale}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a stale write of the pull request: %v, want a conflict", err)
	}
	// Another edit of the card keeps it; clearing it writes NULL.
	back.Title = "renamed"
	must(t, s.Apply(ctx, store.Change{Card: &back}))
	again, _ := s.GetCard(ctx, c.ID)
	if again.PullRequest == nil || again.PullRequest.Number != 12 {
		t.Fatalf("an edit lost the pull request: %+v", again.PullRequest)
	}
	again.PullRequest = nil
	must(t, s.Apply(ctx, store.Change{Card: &again}))
	if last, _ := s.GetCard(ctx, c.ID); last.PullRequest != nil {
		t.Fatalf("cleared pull request reads back %+v", last.PullRequest)
	}
}
