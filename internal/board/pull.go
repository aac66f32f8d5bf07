package board

import "time"

// PullRequest is the pull request of a card's branch (workspace.git.
// pull_request): opened through the outbox after a verified, pushed
// success, then followed while the card waits in its completed column.
type PullRequest struct {
	Number    int        `json:"number"`
	URL       string     `json:"url"`
	Branch    string     `json:"branch"`
	State     string     `json:"state"` // PullOpen, PullMerged, PullClosed
	HeadSHA   string     `json:"head_sha"`
	CheckedAt *time.Time `json:"checked_at"`
	// ETag is the last read's, for the next conditional read.
	ETag string `json:"etag,omitempty"`
	// Handled marks what drover already acted on, so a restart does not act
	// on it again: the newest review and review comment ids, and the check
	// runs (by id) whose failure sent the card back.
	Handled PullHandled `json:"handled"`
}

// PullHandled is what of a pull request drover already acted on.
type PullHandled struct {
	Review  int64   `json:"review,omitempty"`
	Comment int64   `json:"comment,omitempty"`
	Checks  []int64 `json:"checks,omitempty"`
}

// Pull request states on a card.
const (
	PullOpen   = "open"
	PullMerged = "merged"
	PullClosed = "closed"
)

// The review loop's events (audit log).
const (
	EvPullOpened             = "pr_opened"
	EvPullMerged             = "pr_merged"
	EvPullClosed             = "pr_closed"
	EvReviewChangesRequested = "changes_requested"
	EvCheckFailed            = "check_failed"
)

// ReviewItem is one thing a pull request's review loop hands the next
// attempt (the prompt's review variable): a review, a review comment on a
// line of the diff, or a failing check.
type ReviewItem struct {
	Kind    string `json:"kind"` // ReviewKindReview, ReviewKindComment, ReviewKindCheck
	User    string `json:"user,omitempty"`
	State   string `json:"state,omitempty"` // a review's: CHANGES_REQUESTED, COMMENTED, …
	Body    string `json:"body,omitempty"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Name    string `json:"name,omitempty"` // a check's
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
}

// The kinds of a ReviewItem.
const (
	ReviewKindReview  = "review"
	ReviewKindComment = "comment"
	ReviewKindCheck   = "check"
)
