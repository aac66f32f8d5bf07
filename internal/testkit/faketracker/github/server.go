// Package github is a local stand-in for GitHub's REST API for issues and
// pull requests: the
// endpoints drover calls, with the request and response shapes of GitHub's
// published OpenAPI description (github/rest-api-description,
// descriptions/api.github.com/api.github.com.2022-11-28.yaml, read at
// commit 0000036e42b5: issues/list-for-repo — state open|closed|all,
// labels, sort created|updated|comments, direction, since, per_page ≤ 100,
// page, Link; issues/add-labels — {labels: [...]} → 200 and the labels;
// issues/remove-label — 200 and the remaining labels, 404 when the issue
// lacks it; issues/create-comment — {body} → 201;
// issues/list-dependencies-blocked-by — an array of issues; and, from
// GitHub's documentation, issues/get, issues/update, issues/list-comments,
// issues/get-label, issues/create-label, repos/get), the pull requests of
// pulls.go, Link-header pagination, ETags with If-None-Match → 304,
// X-RateLimit-* headers on every answer, a count of requests per route,
// and faults a test can inject: 403 secondary rate
// limits, primary limits, 5xx, malformed bodies, refused label writes. Every
// request is logged in order.
package github

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/drover-dev/drover/internal/testkit/faketracker"
)

// Request is one logged request.
type Request struct {
	Method string
	Path   string // with the query, as sent
	Status int
	Body   string // the request body
}

// String is "METHOD path → status".
func (r Request) String() string { return fmt.Sprintf("%s %s → %d", r.Method, r.Path, r.Status) }

// Issue is one issue (or pull request) of the fake repository.
type Issue struct {
	Number      int
	Title       string
	Body        string
	State       string // open, closed
	StateReason string
	Labels      []string
	PullRequest bool
	BlockedBy   []int // GitHub's issue dependencies: the issues this one is blocked by
	UpdatedAt   time.Time
	ClosedAt    *time.Time
	ClosedBy    string // who closed it ("": nobody the fake knows of)
}

// Comment is one comment on an issue.
type Comment struct {
	ID        int64
	Issue     int
	User      string
	Body      string
	CreatedAt time.Time
}

// Route is what a fault matches: the request's method and its path with
// the query, as sent.
type Route struct{ Method, Path string }

// Fault is an answer injected for the next Times requests that Match.
type Fault = faketracker.Fault[Route]

// Server is the fake. Its zero value is not usable; call New.
type Server struct {
	faketracker.Base[Route, Request]
	Owner, Repo string
	Token       string // when set, requests must carry "Bearer <Token>"

	issues   map[int]*Issue
	labels   map[string]bool
	comments []Comment
	nextID   int64
	now      time.Time

	// pull requests (pulls.go)
	pulls     map[int]*Pull
	branches  map[string]string // branch → head sha, as Push told
	reviews   []Review
	rcomments []ReviewComment
	checks    []CheckRun
	counts    map[string]int // requests per route (Count)
	used      int            // requests answered, for X-RateLimit-*
}

// New starts a fake for owner/repo.
func New(owner, repo string) *Server {
	s := &Server{Owner: owner, Repo: repo, issues: map[int]*Issue{}, labels: map[string]bool{}, nextID: 1000,
		now: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	s.Start(s.route, func(r *http.Request, body []byte, status int) Request {
		return Request{Method: r.Method, Path: r.URL.RequestURI(), Status: status, Body: string(body)}
	})
	return s
}

// tick advances the fake's clock one second: every write stamps a later
// updated_at, as GitHub's whole-second stamps would over real time.
func (s *Server) tick() time.Time {
	if n := time.Now().UTC().Truncate(time.Second); n.After(s.now) {
		s.now = n
	} else {
		s.now = s.now.Add(time.Second)
	}
	return s.now
}

// AddIssue creates an open issue and returns its number.
func (s *Server) AddIssue(title, body string, labels ...string) int {
	s.Lock()
	defer s.Unlock()
	n := len(s.issues) + 1
	for _, l := range labels {
		s.labels[l] = true
	}
	s.issues[n] = &Issue{Number: n, Title: title, Body: body, State: "open", Labels: slices.Clone(labels), UpdatedAt: s.tick()}
	return n
}

// AddPullRequest creates an open pull request (which the issues API lists too).
func (s *Server) AddPullRequest(title string) int {
	n := s.AddIssue(title, "")
	s.Lock()
	s.issues[n].PullRequest = true
	s.Unlock()
	return n
}

// AddLabel makes a label exist in the repository.
func (s *Server) AddLabel(name string) {
	s.Lock()
	s.labels[name] = true
	s.Unlock()
}

// HasLabel reports whether the repository has the label.
func (s *Server) HasLabel(name string) bool {
	s.Lock()
	defer s.Unlock()
	return s.labels[name]
}

// DependsOn records, with GitHub's issue dependencies, that n is blocked by blocker.
func (s *Server) DependsOn(n, blocker int) {
	s.Lock()
	defer s.Unlock()
	if is := s.issues[n]; is != nil {
		is.BlockedBy = append(is.BlockedBy, blocker)
		is.UpdatedAt = s.tick()
	}
}

// EditIssue changes an issue's title and body as a person would.
func (s *Server) EditIssue(n int, title, body string) {
	s.Lock()
	defer s.Unlock()
	if is := s.issues[n]; is != nil {
		is.Title, is.Body, is.UpdatedAt = title, body, s.tick()
	}
}

// CloseIssue closes an issue as a person would.
func (s *Server) CloseIssue(n int) {
	s.Lock()
	defer s.Unlock()
	if is := s.issues[n]; is != nil {
		t := s.tick()
		is.State, is.StateReason, is.UpdatedAt, is.ClosedAt = "closed", "not_planned", t, &t
	}
}

// Delete removes an issue (GitHub answers 410 for it afterwards).
func (s *Server) Delete(n int) {
	s.Lock()
	defer s.Unlock()
	delete(s.issues, n)
}

// PersonComments adds a person's comment to an issue.
func (s *Server) PersonComments(n int, user, body string) {
	s.Lock()
	defer s.Unlock()
	s.addComment(n, user, body)
}

func (s *Server) addComment(n int, user, body string) Comment {
	s.nextID++
	t := s.tick()
	c := Comment{ID: s.nextID, Issue: n, User: user, Body: body, CreatedAt: t}
	s.comments = append(s.comments, c)
	if is := s.issues[n]; is != nil {
		is.UpdatedAt = t
	}
	return c
}

// Issue returns a copy of issue n.
func (s *Server) Issue(n int) Issue {
	s.Lock()
	defer s.Unlock()
	if is := s.issues[n]; is != nil {
		c := *is
		c.Labels = slices.Clone(is.Labels)
		return c
	}
	return Issue{}
}

// Comments returns the comments of issue n, oldest first.
func (s *Server) Comments(n int) []Comment {
	s.Lock()
	defer s.Unlock()
	return slices.DeleteFunc(slices.Clone(s.comments), func(c Comment) bool { return c.Issue != n })
}

// Down makes every request answer 503 (n times; n < 0 until Up).
func (s *Server) Down(n int) {
	s.Inject(Fault{Status: http.StatusServiceUnavailable, Body: `{"message":"Service Unavailable"}`, Times: n})
}

// SecondaryRateLimit answers the next n requests with GitHub's 403
// secondary rate limit (retry-after seconds).
func (s *Server) SecondaryRateLimit(n, retryAfter int) {
	s.Inject(Fault{Status: http.StatusForbidden, Times: n, Header: http.Header{"Retry-After": {strconv.Itoa(retryAfter)}},
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`})
}
