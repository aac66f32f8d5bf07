package operator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

func TestErrorCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("doing it: %w", err) }
	for _, c := range []struct {
		err  error
		want string
	}{
		{&board.InputError{Field: "title", Msg: "empty"}, "invalid_input"},
		{&NotFoundError{Ref: "DRV-9"}, "card_not_found"},
		{wrap(&NotFoundError{Ref: "DRV-9"}), "card_not_found"},
		{&board.MoveError{Msg: "no"}, "invalid_transition"},
		{wrap(&board.MoveError{Msg: "no"}), "invalid_transition"},
		{store.ErrNotFound, "not_found"},
		{wrap(store.ErrConflict), "conflict"},
		{wrap(store.ErrUnavailable), "store_unavailable"},
		{store.ErrSchemaTooNew, "schema_too_new"},
		{errors.New("something else"), ""},
	} {
		if got := ErrorCode(c.err); got != c.want {
			t.Errorf("ErrorCode(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
