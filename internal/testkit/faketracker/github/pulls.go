package github

// The fake's pull requests: their state and the control methods a test
// (or a scenario through the built binary) drives them with, as the people
// and CI around a pull request would. Shapes: pulls/create, pulls/list,
// pulls/get, pulls/list-reviews, pulls/list-review-comments,
// checks/list-for-ref and issues/get (closed_by) of GitHub's published
// OpenAPI description (github/rest-api-description,
// descriptions/api.github.com/api.github.com.2022-11-28.yaml at commit
// 0000036e42b5). Pull requests take their numbers from the issues' (as on
// GitHub, where every pull request is an issue too).

import (
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"time"
)

// Pull is one pull request of the fake repository.
type Pull struct {
	Number    int
	Title     string
	Body      string
	Head      string // the branch, without the owner
	Base      string
	HeadSHA   string
	Draft     bool
	State     string // open, closed
	Merged    bool
	MergedBy  string
	ClosedBy  string
	User      string
	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  *time.Time
	MergedAt  *time.Time
}

// Review is one submitted review.
type Review struct {
	ID          int64
	Pull        int
	User        string
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	Body        string
	CommitID    string
	SubmittedAt time.Time
}

// ReviewComment is one comment on a line of a pull request's diff.
type ReviewComment struct {
	ID        int64
	Pull      int
	ReviewID  int64
	User      string
	Path      string
	Line      int
	Body      string
	CommitID  string
	CreatedAt time.Time
}

// CheckRun is one check run on a commit.
type CheckRun struct {
	ID          int64
	SHA         string
	Name        string
	Status      string // queued, in_progress, completed
	Conclusion  string // "" until completed
	Title       string
	Summary     string
	DetailsURL  string
	StartedAt   time.Time
	CompletedAt *time.Time
}

// Author is the login pull requests opened through the API are by.
const Author = "drover-bot"

// shaOf is the head a branch the fake was never told of is given: a
// stable 40-hex stand-in (the fake knows no git; Push sets real ones).
func shaOf(branch string) string {
	sum := sha1.Sum([]byte("branch:" + branch))
	return hex.EncodeToString(sum[:])
}

// Push records that branch now points at sha, as a push would: every open
// pull request of that branch gets sha as its head (and a later
// updated_at). A pull request opened for a branch never pushed here gets a
// stand-in head derived from the branch's name.
func (s *Server) Push(branch, sha string) {
	s.Lock()
	defer s.Unlock()
	s.branchSHA()[branch] = sha
	for _, p := range s.pulls {
		if p.Head == branch && p.State == "open" {
			p.HeadSHA, p.UpdatedAt = sha, s.tick()
		}
	}
}

func (s *Server) branchSHA() map[string]string {
	if s.branches == nil {
		s.branches = map[string]string{}
	}
	return s.branches
}

// OpenPull opens a pull request as a person would (not through the API,
// so no request is logged or counted) and returns its number.
func (s *Server) OpenPull(head, base, title, user string) int {
	s.Lock()
	defer s.Unlock()
	return s.openPull(head, base, title, "", user, false).Number
}

func (s *Server) openPull(head, base, title, body, user string, draft bool) *Pull {
	if s.pulls == nil {
		s.pulls = map[int]*Pull{}
	}
	sha, ok := s.branchSHA()[head]
	if !ok {
		sha = shaOf(head)
	}
	n := len(s.issues) + 1
	t := s.tick()
	s.issues[n] = &Issue{Number: n, Title: title, Body: body, State: "open", PullRequest: true, UpdatedAt: t}
	p := &Pull{Number: n, Title: title, Body: body, Head: head, Base: base, HeadSHA: sha, Draft: draft,
		State: "open", User: user, CreatedAt: t, UpdatedAt: t}
	s.pulls[n] = p
	return p
}

// SubmitReview submits a review of pull request n on its current head
// (state: APPROVED, CHANGES_REQUESTED, COMMENTED) and returns its id.
func (s *Server) SubmitReview(n int, user, state, body string) int64 {
	s.Lock()
	defer s.Unlock()
	p := s.pulls[n]
	if p == nil {
		return 0
	}
	s.nextID++
	t := s.tick()
	s.reviews = append(s.reviews, Review{ID: s.nextID, Pull: n, User: user, State: state, Body: body, CommitID: p.HeadSHA, SubmittedAt: t})
	p.UpdatedAt = t
	return s.nextID
}

// AddReviewComment adds a comment on line of path in pull request n's
// diff, part of review reviewID (0: a comment of its own), and returns its
// id.
func (s *Server) AddReviewComment(n int, reviewID int64, user, path string, line int, body string) int64 {
	s.Lock()
	defer s.Unlock()
	p := s.pulls[n]
	if p == nil {
		return 0
	}
	s.nextID++
	t := s.tick()
	s.rcomments = append(s.rcomments, ReviewComment{ID: s.nextID, Pull: n, ReviewID: reviewID, User: user, Path: path,
		Line: line, Body: body, CommitID: p.HeadSHA, CreatedAt: t})
	p.UpdatedAt = t
	return s.nextID
}

// AddCheckRun reports a check run on commit sha (status queued,
// in_progress or completed; conclusion success, failure, … once
// completed; title and summary its output; url its details_url) and
// returns its id. Reporting a name again is a re-run: the listing's
// default filter (latest) shows the newest run of each name.
func (s *Server) AddCheckRun(sha, name, status, conclusion, title, summary, url string) int64 {
	s.Lock()
	defer s.Unlock()
	s.nextID++
	t := s.tick()
	c := CheckRun{ID: s.nextID, SHA: sha, Name: name, Status: status, Conclusion: conclusion, Title: title,
		Summary: summary, DetailsURL: url, StartedAt: t}
	if status == "completed" {
		c.CompletedAt = &t
	}
	s.checks = append(s.checks, c)
	return c.ID
}

// MergePull merges pull request n as user by would (closing it).
func (s *Server) MergePull(n int, by string) {
	s.Lock()
	defer s.Unlock()
	if p := s.pulls[n]; p != nil && p.State == "open" {
		t := s.tick()
		p.State, p.Merged, p.MergedBy, p.ClosedBy, p.UpdatedAt, p.MergedAt, p.ClosedAt = "closed", true, by, by, t, &t, &t
		s.closeIssue(n, by, "completed", t)
	}
}

// ClosePull closes pull request n without merging (Close is the
// server's own: it stops it), as user by would.
func (s *Server) ClosePull(n int, by string) {
	s.Lock()
	defer s.Unlock()
	if p := s.pulls[n]; p != nil && p.State == "open" {
		t := s.tick()
		p.State, p.ClosedBy, p.UpdatedAt, p.ClosedAt = "closed", by, t, &t
		s.closeIssue(n, by, "", t)
	}
}

func (s *Server) closeIssue(n int, by, reason string, t time.Time) {
	if is := s.issues[n]; is != nil {
		is.State, is.StateReason, is.ClosedBy, is.UpdatedAt, is.ClosedAt = "closed", reason, by, t, &t
	}
}

// Pull returns a copy of pull request n (the zero Pull when there is none).
func (s *Server) Pull(n int) Pull {
	s.Lock()
	defer s.Unlock()
	if p := s.pulls[n]; p != nil {
		return *p
	}
	return Pull{}
}

// Pulls returns every pull request, by number.
func (s *Server) Pulls() []Pull {
	s.Lock()
	defer s.Unlock()
	out := make([]Pull, 0, len(s.pulls))
	for _, p := range s.pulls {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Pull) int { return a.Number - b.Number })
	return out
}

// Count is how many requests the fake received for route, a method and a
// path below the repository with numbers as {number} and a commit
// reference as {ref}: "POST /pulls", "GET /pulls", "GET /pulls/{number}",
// "GET /pulls/{number}/reviews", "GET /pulls/{number}/comments",
// "GET /commits/{ref}/check-runs", "GET /issues/{number}". Faulted and
// refused requests count too (they were received).
func (s *Server) Count(route string) int {
	s.Lock()
	defer s.Unlock()
	return s.counts[route]
}

// Counts returns every route's count.
func (s *Server) Counts() map[string]int {
	s.Lock()
	defer s.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}
