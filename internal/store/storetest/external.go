package storetest

import (
	"errors"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// testExternal: a card mirroring a tracker issue keeps its link across
// writes, is found by its external key, and a second card for the same issue
// is refused with ErrConflict (two processes syncing at once create one).
func testExternal(t *testing.T, s store.Store) {
	ext := &board.External{Tracker: "github", ID: "42", Key: "acme/app#42", URL: "https://github.com/acme/app/issues/42"}
	a := mkCard(t, s, "mirrored", "ready", func(c *board.Card) { c.External = ext })
	mkCard(t, s, "native", "ready")
	if a.External == nil || *a.External != *ext {
		t.Fatalf("created external = %+v, want %+v", a.External, ext)
	}
	a.Title = "renamed"
	must(t, s.Apply(ctx, store.Change{Card: &a}))
	got, err := s.ListCards(ctx, store.CardFilter{External: "github:42"})
	must(t, err)
	if len(got) != 1 || got[0].ID != a.ID || got[0].External == nil || *got[0].External != *ext || got[0].Title != "renamed" {
		t.Fatalf("by external key = %+v", got)
	}
	tracked, err := s.ListCards(ctx, store.CardFilter{Tracked: true})
	must(t, err)
	if len(tracked) != 1 || tracked[0].ID != a.ID {
		t.Fatalf("tracked = %d cards, want only %s", len(tracked), a.Identifier)
	}
	native, err := s.GetCard(ctx, tracked[0].ID)
	must(t, err)
	if native.External == nil {
		t.Fatal("GetCard lost the link")
	}
	_, err = s.CreateCard(ctx, "DRV", board.Card{Title: "dup", State: "ready", External: ext}, "operator")
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second card for github:42: err = %v, want ErrConflict", err)
	}
}
