package storetest

import (
	"errors"
	"strings"
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

// testTrackerKey: a mirrored card is found by the key people call its issue
// (any ASCII case), after its own id and identifier; a key two trackers'
// cards share is ambiguous and names both; hostile references find nothing.
func testTrackerKey(t *testing.T, s store.Store) {
	native := mkCard(t, s, "native", "ready") // DRV-1
	gh := mkCard(t, s, "github", "ready", func(c *board.Card) {
		c.External = &board.External{Tracker: "github", ID: "7", Key: "acme/app#7"}
	})
	lin := mkCard(t, s, "linear", "ready", func(c *board.Card) {
		c.External = &board.External{Tracker: "linear", ID: "uuid-12", Key: "ENG-12"}
	})
	mkCard(t, s, "linear named like DRV-1", "ready", func(c *board.Card) {
		c.External = &board.External{Tracker: "linear", ID: "uuid-1", Key: "DRV-1"}
	})
	x1 := mkCard(t, s, "github X-1", "ready", func(c *board.Card) { c.External = &board.External{Tracker: "github", ID: "1", Key: "X-1"} })
	x2 := mkCard(t, s, "linear X-1", "ready", func(c *board.Card) { c.External = &board.External{Tracker: "linear", ID: "u1", Key: "x-1"} })

	got, err := s.ListCards(ctx, store.CardFilter{TrackerKey: "Acme/App#7"})
	must(t, err)
	if len(got) != 1 || got[0].ID != gh.ID {
		t.Fatalf("ListCards(TrackerKey acme/app#7) = %d cards, want only %s", len(got), gh.Identifier)
	}
	for ref, want := range map[string]string{"acme/app#7": gh.ID, "ACME/APP#7": gh.ID, "eng-12": lin.ID, "ENG-12": lin.ID,
		"DRV-1": native.ID, "drv-1": native.ID, lin.ID: lin.ID, gh.Identifier: gh.ID} {
		c, err := store.FindCard(ctx, s, ref)
		if err != nil || c.ID != want {
			t.Errorf("FindCard(%q) = %s, %v; want card %s", ref, c.Identifier, err, want)
		}
	}
	_, err = store.FindCard(ctx, s, "X-1")
	var amb *store.AmbiguousError
	if !errors.As(err, &amb) || len(amb.Cards) != 2 || !strings.Contains(err.Error(), x1.Identifier) || !strings.Contains(err.Error(), x2.Identifier) {
		t.Fatalf("FindCard(X-1) err = %v, want an AmbiguousError naming %s and %s", err, x1.Identifier, x2.Identifier)
	}
	for _, ref := range []string{"", "ENG-99", "acme/app#", "%", "../../etc/passwd", "ENG-12\x00", "\xff\xfe", strings.Repeat("a", 1<<20)} {
		if c, err := store.FindCard(ctx, s, ref); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("FindCard(%.40q) = %s, %v; want ErrNotFound", ref, c.Identifier, err)
		}
	}
}
