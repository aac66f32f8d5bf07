// Package tracker is the seam between drover and an external issue tracker
// (GitHub Issues, Linear). drover's own store stays the source of truth for
// claims, runs, budgets and decisions — trackers have no locking — so a
// tracker is two things to drover:
//
//   - a source of cards: Syncer mirrors the tracker's candidate issues into
//     the store as cards carrying their board.External link, cancels a card
//     whose issue was closed or deleted (a running agent stops), and answers
//     a parked card from a human's comment on its issue;
//   - a channel of projections: Projector turns the card's moves in the
//     audit log into outbox rows (channel "tracker": retries, backoff,
//     idempotency keys), and Deliverer writes them to the tracker. A
//     projection that fails is shown by drover status and never changes the
//     card's outcome; a write the tracker refuses leaves the card where
//     drover put it (blocked stays blocked, never re-claimed).
//
// Each tracker kind is a package (tracker/github, tracker/linear)
// implementing Tracker.
package tracker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Issue is one issue as drover sees it.
type Issue struct {
	ID        string // the tracker's stable id (GitHub: the issue number; Linear: its id)
	Key       string // what people call it: acme/app#42, ENG-12
	URL       string
	Title     string
	Body      string
	Labels    []string
	State     string   // the tracker's state name: open, closed, "In Progress"
	Terminal  bool     // the state is one of tracker.terminal_states (or the issue is closed)
	Priority  int      // 1 highest … 4, 0 none
	BlockedBy []string // ids of issues this one waits on
	UpdatedAt time.Time
	// Fault says what of the issue the tracker could not read (its answer
	// for it did not decode, its dependencies could not be listed); ""
	// when it read the whole issue. The syncer makes no card and copies no
	// edit from an issue with a fault (its card keeps its last good input,
	// and is not cancelled for it), and shows the fault on the card and in
	// drover status; the other issues go on.
	Fault string
}

// Comment is one comment on an issue.
type Comment struct {
	ID     string
	Author string
	Body   string
	At     time.Time
}

// Caps are what a tracker can show. A projection the tracker cannot show is
// skipped, not failed.
type Caps struct {
	Labels   bool // labels can be added and removed
	States   bool // the issue's state can be set (open/closed, a workflow state)
	Comments bool
}

// Tracker is one external tracker.
type Tracker interface {
	// Kind is the tracker kind (github, linear): the Tracker of board.External.
	Kind() string
	Caps() Caps
	// Check verifies the configuration against the tracker at start: the
	// repository or project is reachable with the token, and every label or
	// state tracker.roles names exists (a missing GitHub label is created;
	// a missing Linear state is an error naming the key).
	Check(ctx context.Context) error
	// Candidates lists the issues drover may dispatch (active states,
	// required labels; never pull requests). changed is false when the
	// tracker says nothing changed since the last call (a 304 to a
	// conditional request); the issues are still the whole list.
	Candidates(ctx context.Context) (issues []Issue, changed bool, err error)
	// Refresh reads issues by id. An id missing from the result is gone
	// (deleted, transferred, out of the project). A failed refresh is an
	// error, never an empty result.
	Refresh(ctx context.Context, ids []string) (map[string]Issue, error)
	// Move shows the card's move from one column role to another.
	Move(ctx context.Context, id string, from, to board.Role) error
	Comment(ctx context.Context, id, body string) error
	AddLabels(ctx context.Context, id string, labels []string) error
	RemoveLabels(ctx context.Context, id string, labels []string) error
	// CommentsSince lists the comments made on the issue after since,
	// oldest first.
	CommentsSince(ctx context.Context, id string, since time.Time) ([]Comment, error)
}

// Errors a Tracker returns, told apart by the provider's status codes and
// headers (see each kind's classify), never by message text.
var (
	// ErrRefused: the tracker refused the write (a 403 that is not a rate
	// limit, 404 on the issue, 410, 422, a GraphQL mutation answering
	// success: false). Retrying will not help; the card stays where drover
	// put it.
	ErrRefused = errors.New("the tracker refused the write")
	// ErrUnavailable: the tracker could not be reached or answered with a
	// 5xx or a body that is not what its API documents. Retried later.
	ErrUnavailable = errors.New("the tracker is unavailable")
)

// RateLimitError: the tracker asked drover to wait (GitHub's primary and
// secondary rate limits, Linear's RATELIMITED). Polling and deliveries wait
// until Until; it is never a card's failure.
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

// Marker ends every comment drover writes, so CommentsSince's caller can
// tell drover's own comments from a person's answer.
const Marker = "<!-- drover -->"

// Mine reports whether a comment was written by drover.
func Mine(body string) bool { return strings.Contains(body, Marker) }

// Sign appends the marker to a comment drover writes.
func Sign(body string) string { return strings.TrimRight(body, "\n") + "\n\n" + Marker }
