// Package forge opens and follows the pull request of a card's branch on
// the service that hosts the repository (GitHub first, in forge/github).
// It knows nothing of git (package gitwork pushes) or of the dispatcher.
package forge

import (
	"context"
	"time"
)

// Forge is the seam the dispatcher uses.
type Forge interface {
	// EnsurePull returns the open pull request of spec.Head, opening one
	// when there is none: calling it twice, from two nodes or after a
	// crash, makes one pull request.
	EnsurePull(ctx context.Context, spec PullSpec) (Pull, error)
	// PullState reads a pull request with its reviews, review comments
	// and the check runs of its head commit. etag is the ETag of the last
	// read ("" for none); when nothing changed since, the result has
	// NotModified set and nothing else (a conditional request that costs
	// no rate limit on GitHub).
	PullState(ctx context.Context, number int, etag string) (PullState, error)
}

// Config is workspace.git.pull_request in WORKFLOW.md.
type Config struct {
	Kind       string `json:"provider" yaml:"provider"` // github
	Repository string `json:"repo" yaml:"repo"`         // owner/name
	Endpoint   string `json:"endpoint,omitempty" yaml:"endpoint"`
	// APIKey is the token ($GITHUB_TOKEN is read from the environment, as
	// tracker.api_key is); "" reads the variable TokenEnv names.
	APIKey   string `json:"-" yaml:"api_key" cfg:"secret"`
	TokenEnv string `json:"token_env,omitempty" yaml:"token_env"` // default GITHUB_TOKEN
	// WebhookSecret is the secret GitHub signs the repository's webhook
	// with ($VAR is read from the environment); with it, POST
	// /api/v1/webhooks/pulls makes drover read the pull requests an event
	// names at once instead of at their next poll.
	WebhookSecret string `json:"-" yaml:"webhook_secret" cfg:"secret"`
	// PollInterval is how often an open pull request is read when no
	// webhook told drover first; 0 is DefaultPollInterval.
	PollInterval time.Duration `json:"poll_interval,omitempty" yaml:"poll_interval"`
	// RequiredChecks names the check runs that decide; empty: every
	// check run on the head commit.
	RequiredChecks []string `json:"required_checks,omitempty" yaml:"required_checks"`
	Draft          bool     `json:"draft,omitempty" yaml:"draft"`
}

// DefaultPollInterval is how often an open pull request is read.
const DefaultPollInterval = time.Minute

// PullSpec is the pull request a card's branch should have.
type PullSpec struct {
	Head  string // the card's branch
	Base  string
	Title string
	Body  string
	Draft bool
}

// Pull is a pull request as EnsurePull found or opened it.
type Pull struct {
	Number  int    `json:"number"`
	URL     string `json:"url"` // the page people open (html_url)
	Created bool   `json:"created"`
}

// Pull request states.
const (
	StateOpen   = "open"
	StateClosed = "closed"
)

// PullState is a pull request as one read found it.
type PullState struct {
	Number      int       `json:"number"`
	URL         string    `json:"url"`
	State       string    `json:"state"` // open, closed
	Merged      bool      `json:"merged"`
	MergedBy    string    `json:"merged_by,omitempty"`
	ClosedBy    string    `json:"closed_by,omitempty"`
	HeadSHA     string    `json:"head_sha"`
	UpdatedAt   time.Time `json:"updated_at"`
	ETag        string    `json:"etag,omitempty"`
	NotModified bool      `json:"not_modified,omitempty"`

	Reviews  []Review        `json:"reviews"`
	Comments []ReviewComment `json:"comments"` // review comments (on lines of the diff)
	Checks   []Check         `json:"checks"`   // check runs of HeadSHA
}

// Review states, as GitHub names them.
const (
	ReviewApproved         = "APPROVED"
	ReviewChangesRequested = "CHANGES_REQUESTED"
	ReviewCommented        = "COMMENTED"
	ReviewDismissed        = "DISMISSED"
)

// Review is one submitted review.
type Review struct {
	ID          int64     `json:"id"`
	User        string    `json:"user"`
	State       string    `json:"state"`
	Body        string    `json:"body"`
	CommitID    string    `json:"commit_id"`
	SubmittedAt time.Time `json:"submitted_at"`
}

// ReviewComment is a comment on a line of the pull request's diff.
type ReviewComment struct {
	ID        int64     `json:"id"`
	ReviewID  int64     `json:"review_id,omitempty"`
	User      string    `json:"user"`
	Path      string    `json:"path"`
	Line      int       `json:"line,omitempty"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
}

// Check is one check run on the head commit.
type Check struct {
	ID         int64  `json:"id,omitempty"` // tells a re-run from the run it replaces
	Name       string `json:"name"`
	Status     string `json:"status"`               // queued, in_progress, completed
	Conclusion string `json:"conclusion,omitempty"` // success, failure, timed_out, cancelled, neutral, skipped, action_required
	Summary    string `json:"summary,omitempty"`    // output.title and output.summary
	URL        string `json:"url,omitempty"`        // details_url, else html_url
}

// Failed says whether the check completed and did not pass.
func (c Check) Failed() bool {
	switch c.Conclusion {
	case "failure", "timed_out", "cancelled", "action_required":
		return c.Status == "completed"
	}
	return false
}
