package forge

import (
	"errors"
	"fmt"
	"time"
)

// The kinds of a forge's failure, for errors.Is. Every error a Forge
// returns is an *Error wrapping one of them (or a *RateLimitError), so the
// dispatcher decides on the kind and shows the message.
var (
	// ErrAuth: the token was refused (401, or a 403 that is not a rate
	// limit). Fix the token or its permissions; retrying will not help.
	ErrAuth = errors.New("the forge refused the token")
	// ErrNotFound: the repository or pull request does not exist, or the
	// token cannot see it (GitHub answers 404 for both).
	ErrNotFound = errors.New("not found on the forge")
	// ErrRefused: the forge refused the request as invalid (a 422 other
	// than the pull request already existing), e.g. no commits between
	// base and head, or a base branch that does not exist.
	ErrRefused = errors.New("the forge refused the request")
	// ErrUnavailable: the forge could not be reached, answered 5xx or
	// with a body that is not what its API documents. Retried later.
	ErrUnavailable = errors.New("the forge is unavailable")
)

// RateLimitError: the forge asked drover to wait until Until (GitHub's
// primary or secondary rate limit). It is never a card's failure.
type RateLimitError struct {
	Until     time.Time
	Secondary bool
	Msg       string
}

func (e *RateLimitError) Error() string {
	kind := "rate limited"
	if e.Secondary {
		kind = "secondary rate limit"
	}
	return fmt.Sprintf("%s until %s: %s", kind, e.Until.UTC().Format(time.RFC3339), e.Msg)
}

// Error is one failed request: which repository, which operation, what
// the forge answered and what to do.
type Error struct {
	Repository string // owner/name
	Op         string // the API operation, e.g. "pulls/create"
	Request    string // "POST /repos/o/r/pulls"
	Status     int    // 0: no answer
	Msg        string // the forge's message
	Fix        string // what to do, "" when waiting is the fix
	Err        error  // ErrAuth, ErrNotFound, ErrRefused, ErrUnavailable or a *RateLimitError
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s (%s): ", e.Repository, e.Op, e.Request)
	if e.Status != 0 {
		s += fmt.Sprintf("%d ", e.Status)
	}
	s += e.Err.Error()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
