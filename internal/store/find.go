package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
)

// MaxRefLen bounds a card reference: no id, identifier or tracker key is
// longer, so a longer one is looked up nowhere and is simply not found.
const MaxRefLen = 256

// AmbiguousError: a tracker key names cards of more than one tracker.
type AmbiguousError struct {
	Ref   string
	Cards []board.Card
}

func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Cards))
	for i, c := range e.Cards {
		names[i] = fmt.Sprintf("%s (%s issue %s)", c.Identifier, c.External.Tracker, c.External.Key)
	}
	return fmt.Sprintf("tracker key %q names %d cards: %s; use the card's identifier instead",
		e.Ref, len(e.Cards), strings.Join(names, ", "))
}

// FindCard resolves what a person calls a card: its id first, then its
// identifier (DRV-12, any case), then the key of the tracker issue it
// mirrors (acme/app#7, ENG-12, any case). A reference naming nothing, or
// too long or not UTF-8 to name anything, is ErrNotFound; a tracker key
// that two trackers' cards share is an *AmbiguousError listing them.
func FindCard(ctx context.Context, s Store, ref string) (board.Card, error) {
	if ref == "" || len(ref) > MaxRefLen || !utf8.ValidString(ref) || strings.ContainsRune(ref, 0) {
		return board.Card{}, ErrNotFound
	}
	c, err := s.GetCard(ctx, ref)
	if !errors.Is(err, ErrNotFound) {
		return c, err
	}
	cards, err := s.ListCards(ctx, CardFilter{TrackerKey: ref, Limit: 10})
	switch {
	case err != nil:
		return board.Card{}, err
	case len(cards) == 0:
		return board.Card{}, ErrNotFound
	case len(cards) > 1:
		return board.Card{}, &AmbiguousError{Ref: ref, Cards: cards}
	}
	return cards[0], nil
}
