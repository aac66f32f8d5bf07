// Package pullflow opens a card's pull request (the outbox's forge rows,
// delivered on the leader) and follows it while the card waits in its
// completed column: merged is done, closed is blocked, changes requested
// or a failing check send the card back to the agent with what was asked.
// The decision on each read (Decide) is pure; Deliverer and Follower do the
// reading and writing.
package pullflow

import (
	"slices"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/forge"
)

// Verdict is what one read of a pull request asks drover to do.
type Verdict string

// Verdicts.
const (
	None        Verdict = "none"              // nothing new: record the read
	Merged      Verdict = "merged"            // the card is done
	Closed      Verdict = "closed"            // closed without merging: blocked
	Changes     Verdict = "changes_requested" // a review asked for changes: back to the agent
	CheckFailed Verdict = "check_failed"      // a deciding check failed on the head: back, counted
)

// Outcome is the decision on one read.
type Outcome struct {
	Verdict Verdict
	// PR is the card's record after the read: state, head, ETag, the read's
	// time and what is handled now (written with the verdict's change, so a
	// restart does not act on the same review or check again).
	PR board.PullRequest
	By string // who merged, closed or reviewed
	// Review is what the next attempt is told (reviews, comments, checks).
	Review []board.ReviewItem
	// Reviews and Comments are the new reviews and review comments.
	Reviews  []forge.Review
	Comments []forge.ReviewComment
	Check    *forge.Check // the failing check (CheckFailed)
}

// Decide maps the card's record of its pull request and one read of it to
// what drover does. required is forge.Config.RequiredChecks.
func Decide(pr board.PullRequest, st forge.PullState, required []string, now time.Time) Outcome {
	at := now.UTC()
	pr.CheckedAt = &at
	out := Outcome{Verdict: None}
	if st.NotModified {
		out.PR = pr
		return out
	}
	if st.ETag != "" {
		pr.ETag = st.ETag
	}
	if st.URL != "" {
		pr.URL = st.URL
	}
	if st.HeadSHA != "" {
		pr.HeadSHA = st.HeadSHA
	}
	switch {
	case st.Merged:
		pr.State = board.PullMerged
		out.PR, out.Verdict, out.By = pr, Merged, st.MergedBy
		return out
	case st.State == forge.StateClosed:
		pr.State = board.PullClosed
		out.PR, out.Verdict, out.By = pr, Closed, st.ClosedBy
		return out
	}
	pr.State = board.PullOpen

	// Reviews and review comments newer than the last handled.
	asked := false
	handled := pr.Handled
	for _, r := range st.Reviews {
		if r.ID <= handled.Review {
			continue
		}
		pr.Handled.Review = max(pr.Handled.Review, r.ID)
		if r.State != forge.ReviewChangesRequested && (r.State != forge.ReviewCommented || r.Body == "") {
			continue
		}
		out.Reviews = append(out.Reviews, r)
		out.Review = append(out.Review, board.ReviewItem{Kind: board.ReviewKindReview, User: r.User, State: r.State, Body: r.Body})
		if r.State == forge.ReviewChangesRequested {
			asked = true
			out.By = r.User
		}
	}
	for _, c := range st.Comments {
		if c.ID <= handled.Comment {
			continue
		}
		pr.Handled.Comment = max(pr.Handled.Comment, c.ID)
		out.Comments = append(out.Comments, c)
		out.Review = append(out.Review, board.ReviewItem{Kind: board.ReviewKindComment, User: c.User, Body: c.Body, Path: c.Path, Line: c.Line})
		asked = true
		if out.By == "" {
			out.By = c.User
		}
	}

	// A deciding check that failed on the head, not handled yet.
	v := forge.Checks(required, st.Checks)
	var failed []int64
	var fresh *forge.Check
	for i, c := range v.Failed {
		failed = append(failed, c.ID)
		if fresh == nil && !slices.Contains(handled.Checks, c.ID) {
			fresh = &v.Failed[i]
		}
	}
	pr.Handled.Checks = failed
	if fresh != nil {
		out.Review = append(out.Review, board.ReviewItem{Kind: board.ReviewKindCheck, Name: fresh.Name, Summary: fresh.Summary, URL: fresh.URL})
	}
	out.PR = pr
	switch {
	case asked:
		out.Verdict = Changes
	case fresh != nil:
		out.Verdict, out.Check = CheckFailed, fresh
	default:
		// A COMMENTED review alone asks for nothing: handled, not acted on.
		out.Review, out.Reviews = nil, nil
	}
	return out
}
