package operator

import (
	"errors"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// The stable error codes of the errors the board, the operator service and
// the store return. The HTTP API's error envelope and the CLI's --json
// errors both carry them, so one failure has one code wherever it is seen.
const (
	CodeInvalidInput      = "invalid_input"      // *board.InputError
	CodeCardNotFound      = "card_not_found"     // *NotFoundError
	CodeCardAmbiguous     = "card_ambiguous"     // *store.AmbiguousError
	CodeInvalidTransition = "invalid_transition" // *board.MoveError
	CodeNotFound          = "not_found"          // store.ErrNotFound (not a card reference)
	CodeConflict          = "conflict"           // store.ErrConflict
	CodeStoreUnavailable  = "store_unavailable"  // store.ErrUnavailable
	CodeSchemaTooNew      = "schema_too_new"     // store.ErrSchemaTooNew
)

// ErrorCode returns the stable code for err, or "" when err is none of the
// errors above (the caller then says what it is: a usage error, a bad
// config, or an internal failure).
func ErrorCode(err error) string {
	var in *board.InputError
	var nf *NotFoundError
	var mv *board.MoveError
	var amb *store.AmbiguousError
	switch {
	case errors.As(err, &in):
		return CodeInvalidInput
	case errors.As(err, &nf):
		return CodeCardNotFound
	case errors.As(err, &amb):
		return CodeCardAmbiguous
	case errors.As(err, &mv):
		return CodeInvalidTransition
	case errors.Is(err, store.ErrNotFound):
		return CodeNotFound
	case errors.Is(err, store.ErrConflict):
		return CodeConflict
	case errors.Is(err, store.ErrUnavailable):
		return CodeStoreUnavailable
	case errors.Is(err, store.ErrSchemaTooNew):
		return CodeSchemaTooNew
	}
	return ""
}
