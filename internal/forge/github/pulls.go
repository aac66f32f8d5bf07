package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/forge"
)

// The wire shapes drover reads (subsets of the OpenAPI description's
// schemas pull-request / pull-request-simple, pull-request-review,
// pull-request-review-comment, check-run, issue).
type (
	wireUser struct {
		Login string `json:"login"`
	}
	wireRef struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	wirePull struct {
		Number    int       `json:"number"`
		HTMLURL   string    `json:"html_url"`
		State     string    `json:"state"`
		Merged    bool      `json:"merged"`
		MergedAt  *string   `json:"merged_at"`
		MergedBy  *wireUser `json:"merged_by"`
		Head      wireRef   `json:"head"`
		Base      wireRef   `json:"base"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	wireReview struct {
		ID          int64      `json:"id"`
		User        *wireUser  `json:"user"`
		State       string     `json:"state"`
		Body        string     `json:"body"`
		CommitID    string     `json:"commit_id"`
		SubmittedAt *time.Time `json:"submitted_at"`
	}
	wireReviewComment struct {
		ID           int64     `json:"id"`
		ReviewID     *int64    `json:"pull_request_review_id"`
		User         *wireUser `json:"user"`
		Path         string    `json:"path"`
		Line         *int      `json:"line"`
		OriginalLine *int      `json:"original_line"`
		Body         string    `json:"body"`
		CreatedAt    time.Time `json:"created_at"`
	}
	wireCheckRun struct {
		ID         int64   `json:"id"`
		Name       string  `json:"name"`
		Status     string  `json:"status"`
		Conclusion *string `json:"conclusion"`
		DetailsURL *string `json:"details_url"`
		HTMLURL    string  `json:"html_url"`
		Output     struct {
			Title   *string `json:"title"`
			Summary *string `json:"summary"`
		} `json:"output"`
	}
)

func login(u *wireUser) string {
	if u == nil || u.Login == "" {
		return "ghost" // GitHub's name for a deleted account
	}
	return u.Login
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// EnsurePull returns the open pull request of spec.Head, opening one when
// there is none (pulls/list by head and base, then pulls/create). When
// GitHub answers the create with its validation error "A pull request
// already exists", another node (or an attempt before a crash) won: the
// listing is read again (without the base, as GitHub's rule is one open
// pull request per head) and that pull request returned.
func (f *Forge) EnsurePull(ctx context.Context, spec forge.PullSpec) (forge.Pull, error) {
	for field, v := range map[string]string{"Head": spec.Head, "Base": spec.Base, "Title": spec.Title} {
		if strings.TrimSpace(v) == "" {
			return forge.Pull{}, fmt.Errorf("forge.PullSpec.%s is empty (the pull request of a card names its branch, base and title)", field)
		}
	}
	if p, ok, err := f.findPull(ctx, spec.Head, spec.Base); err != nil || ok {
		return p, err
	}
	c := call{op: "pulls/create", method: http.MethodPost, path: f.repoPath() + "/pulls",
		in: map[string]any{"title": spec.Title, "head": spec.Head, "base": spec.Base, "body": spec.Body, "draft": spec.Draft}}
	r, err := f.do(ctx, c)
	if err != nil {
		return forge.Pull{}, err
	}
	switch r.status {
	case http.StatusCreated, http.StatusOK:
		var p wirePull
		if err := f.decode(c, r, &p); err != nil {
			return forge.Pull{}, err
		}
		return forge.Pull{Number: p.Number, URL: p.HTMLURL, Created: true}, nil
	case http.StatusUnprocessableEntity:
		msgs := validationMessages(r.body)
		if !alreadyExists(msgs) {
			return forge.Pull{}, f.fail(c, r.status, forge.ErrRefused, strings.Join(msgs, "; "),
				"check that base "+strconv.Quote(spec.Base)+" exists and that "+strconv.Quote(spec.Head)+" was pushed with commits it does not have")
		}
		wait := f.retryWait
		for try := 0; ; try++ {
			p, ok, err := f.findPull(ctx, spec.Head, "")
			if err != nil || ok {
				return p, err
			}
			if try == 2 {
				return forge.Pull{}, f.fail(c, r.status, forge.ErrUnavailable, strings.Join(msgs, "; ")+", but the listing shows none yet", "")
			}
			select {
			case <-ctx.Done():
				return forge.Pull{}, ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
		}
	}
	return forge.Pull{}, f.fail(c, r.status, forge.ErrUnavailable, "unexpected answer", "")
}

// findPull is the open pull request of head (on base, when not ""), as
// pulls/list finds it: head is filtered as owner:branch, every value
// query-encoded (a branch may hold &, #, + or %).
func (f *Forge) findPull(ctx context.Context, head, base string) (forge.Pull, bool, error) {
	q := url.Values{"state": {"open"}, "head": {f.owner + ":" + head}, "per_page": {"100"}}
	if base != "" {
		q.Set("base", base)
	}
	c := call{op: "pulls/list", method: http.MethodGet, path: f.repoPath() + "/pulls?" + q.Encode()}
	l, err := f.list(ctx, c, nil)
	if err != nil {
		return forge.Pull{}, false, err
	}
	for _, raw := range l.items {
		var p wirePull
		if err := json.Unmarshal(raw, &p); err != nil {
			return forge.Pull{}, false, f.fail(c, http.StatusOK, forge.ErrUnavailable, "malformed answer: "+err.Error(), "")
		}
		// GitHub filters already; a listing that ignored the filter must
		// not hand back another branch's pull request.
		if p.Head.Ref == head && p.State == forge.StateOpen && (base == "" || p.Base.Ref == base) {
			return forge.Pull{Number: p.Number, URL: p.HTMLURL}, true, nil
		}
	}
	return forge.Pull{}, false, nil
}

// validationMessages are the messages of GitHub's 422 body: its message
// and each error's message (or field and code).
func validationMessages(b []byte) []string {
	var v struct {
		Message string `json:"message"`
		Errors  []struct {
			Message, Field, Code, Resource string
		} `json:"errors"`
	}
	if json.Unmarshal(b, &v) != nil {
		return []string{strings.TrimSpace(string(b))}
	}
	out := []string{v.Message}
	for _, e := range v.Errors {
		switch {
		case e.Message != "":
			out = append(out, e.Message)
		case e.Field != "":
			out = append(out, e.Field+": "+e.Code)
		}
	}
	return out
}

func alreadyExists(msgs []string) bool {
	for _, m := range msgs {
		if strings.Contains(strings.ToLower(m), "pull request already exists") {
			return true
		}
	}
	return false
}

// tags are the ETags of one read, carried as PullState.ETag: the pull
// request's, its reviews', its review comments', the head's check runs'
// (each "" when its listing had several pages), and the head they were
// read on.
type tags struct {
	Pull     string `json:"p"`
	Reviews  string `json:"r"`
	Comments string `json:"c"`
	Checks   string `json:"k"`
	SHA      string `json:"sha"`
}

func parseTags(s string) tags {
	var t tags
	if json.Unmarshal([]byte(s), &t) != nil {
		return tags{}
	}
	return t
}

func (t tags) String() string {
	b, _ := json.Marshal(t)
	return string(b)
}

// PullState reads pull request number: pulls/get, pulls/list-reviews,
// pulls/list-review-comments and checks/list-for-ref of its head, each
// conditional on its ETag from etag (a check run or a review does not
// change the pull request's own ETag, so all four are asked). When all
// four answer 304 the result is NotModified; otherwise every part is read
// whole (those that answered 304 again, unconditionally) and, for a pull
// request closed without merging, issues/get says who closed it.
func (f *Forge) PullState(ctx context.Context, number int, etag string) (forge.PullState, error) {
	prev := parseTags(etag)
	base := f.repoPath()
	pullCall := call{op: "pulls/get", method: http.MethodGet, path: fmt.Sprintf("%s/pulls/%d", base, number), ifNoneMatch: prev.Pull}
	reviewsCall := call{op: "pulls/list-reviews", method: http.MethodGet, path: fmt.Sprintf("%s/pulls/%d/reviews?per_page=100", base, number), ifNoneMatch: prev.Reviews}
	commentsCall := call{op: "pulls/list-review-comments", method: http.MethodGet, path: fmt.Sprintf("%s/pulls/%d/comments?per_page=100", base, number), ifNoneMatch: prev.Comments}

	var p wirePull
	pullNM, pullTag, err := f.getPull(ctx, pullCall, &p)
	if err != nil {
		return forge.PullState{}, err
	}
	sha := p.Head.SHA
	if pullNM {
		sha = prev.SHA
	}
	checksCall := call{op: "checks/list-for-ref", method: http.MethodGet,
		path: fmt.Sprintf("%s/commits/%s/check-runs?filter=latest&per_page=100", base, esc(sha))}
	if sha == prev.SHA {
		checksCall.ifNoneMatch = prev.Checks
	}
	reviews, err := f.list(ctx, reviewsCall, nil)
	if err != nil {
		return forge.PullState{}, err
	}
	comments, err := f.list(ctx, commentsCall, nil)
	if err != nil {
		return forge.PullState{}, err
	}
	checks, err := f.list(ctx, checksCall, checkRunItems)
	if err != nil {
		return forge.PullState{}, err
	}
	if pullNM && reviews.notModified && comments.notModified && checks.notModified {
		return forge.PullState{Number: number, ETag: etag, NotModified: true}, nil
	}
	// Something changed: the parts that did not are read whole again.
	if pullNM {
		pullCall.ifNoneMatch = ""
		if _, pullTag, err = f.getPull(ctx, pullCall, &p); err != nil {
			return forge.PullState{}, err
		}
		if p.Head.SHA != sha { // pushed between the two reads
			checksCall.path, checks.notModified = strings.Replace(checksCall.path, "/commits/"+esc(sha)+"/", "/commits/"+esc(p.Head.SHA)+"/", 1), true
		}
	}
	for _, part := range []struct {
		c *call
		l *listed
		f func([]byte) ([]json.RawMessage, error)
	}{{&reviewsCall, &reviews, nil}, {&commentsCall, &comments, nil}, {&checksCall, &checks, checkRunItems}} {
		if part.l.notModified {
			part.c.ifNoneMatch = ""
			if *part.l, err = f.list(ctx, *part.c, part.f); err != nil {
				return forge.PullState{}, err
			}
		}
	}
	st := forge.PullState{Number: p.Number, URL: p.HTMLURL, State: p.State, Merged: p.Merged || p.MergedAt != nil,
		HeadSHA: p.Head.SHA, UpdatedAt: p.UpdatedAt,
		Reviews: []forge.Review{}, Comments: []forge.ReviewComment{}, Checks: []forge.Check{}}
	if st.Merged {
		st.MergedBy = login(p.MergedBy)
		st.ClosedBy = st.MergedBy
	} else if p.State == forge.StateClosed {
		if st.ClosedBy, err = f.closedBy(ctx, number); err != nil {
			return forge.PullState{}, err
		}
	}
	if err := f.readReviews(reviewsCall, reviews, &st); err != nil {
		return forge.PullState{}, err
	}
	if err := f.readComments(commentsCall, comments, &st); err != nil {
		return forge.PullState{}, err
	}
	if err := f.readChecks(checksCall, checks, &st); err != nil {
		return forge.PullState{}, err
	}
	st.ETag = tags{Pull: pullTag, Reviews: reviews.etag, Comments: comments.etag, Checks: checks.etag, SHA: p.Head.SHA}.String()
	return st, nil
}

// getPull is pulls/get: notModified on a 304 (p untouched), else p and
// the answer's ETag.
func (f *Forge) getPull(ctx context.Context, c call, p *wirePull) (notModified bool, etag string, err error) {
	r, err := f.do(ctx, c)
	if err != nil {
		return false, "", err
	}
	switch r.status {
	case http.StatusNotModified:
		if c.ifNoneMatch != "" {
			return true, c.ifNoneMatch, nil
		}
	case http.StatusOK:
		if err := f.decode(c, r, p); err != nil {
			return false, "", err
		}
		if p.Number == 0 || p.State == "" {
			return false, "", f.fail(c, r.status, forge.ErrUnavailable, "malformed answer: no number or state", "")
		}
		return false, r.header.Get("ETag"), nil
	}
	return false, "", f.fail(c, r.status, forge.ErrUnavailable, "unexpected answer: "+string(r.body), "")
}

// closedBy is who closed pull request number (issues/get's closed_by).
func (f *Forge) closedBy(ctx context.Context, number int) (string, error) {
	c := call{op: "issues/get", method: http.MethodGet, path: fmt.Sprintf("%s/issues/%d", f.repoPath(), number)}
	r, err := f.do(ctx, c)
	if err != nil {
		return "", err
	}
	var is struct {
		ClosedBy *wireUser `json:"closed_by"`
	}
	if r.status != http.StatusOK {
		return "", f.fail(c, r.status, forge.ErrUnavailable, "unexpected answer", "")
	}
	if err := f.decode(c, r, &is); err != nil {
		return "", err
	}
	if is.ClosedBy == nil {
		return "", nil
	}
	return is.ClosedBy.Login, nil
}

// readReviews keeps the submitted reviews (a PENDING one is a draft its
// author has not sent).
func (f *Forge) readReviews(c call, l listed, st *forge.PullState) error {
	for _, raw := range l.items {
		var w wireReview
		if err := json.Unmarshal(raw, &w); err != nil {
			return f.fail(c, http.StatusOK, forge.ErrUnavailable, "malformed review: "+err.Error(), "")
		}
		if w.State == "PENDING" {
			continue
		}
		rv := forge.Review{ID: w.ID, User: login(w.User), State: w.State, Body: w.Body, CommitID: w.CommitID}
		if w.SubmittedAt != nil {
			rv.SubmittedAt = *w.SubmittedAt
		}
		st.Reviews = append(st.Reviews, rv)
	}
	return nil
}

// readComments reads review comments; one on a line that a later push
// removed has no line, and keeps its original one.
func (f *Forge) readComments(c call, l listed, st *forge.PullState) error {
	for _, raw := range l.items {
		var w wireReviewComment
		if err := json.Unmarshal(raw, &w); err != nil {
			return f.fail(c, http.StatusOK, forge.ErrUnavailable, "malformed review comment: "+err.Error(), "")
		}
		rc := forge.ReviewComment{ID: w.ID, User: login(w.User), Path: w.Path, Body: w.Body, CreatedAt: w.CreatedAt}
		if w.ReviewID != nil {
			rc.ReviewID = *w.ReviewID
		}
		if w.Line != nil {
			rc.Line = *w.Line
		} else if w.OriginalLine != nil {
			rc.Line = *w.OriginalLine
		}
		st.Comments = append(st.Comments, rc)
	}
	return nil
}

// readChecks reads check runs: Summary is output.title and output.summary,
// URL details_url (the CI's own page), else html_url.
func (f *Forge) readChecks(c call, l listed, st *forge.PullState) error {
	for _, raw := range l.items {
		var w wireCheckRun
		if err := json.Unmarshal(raw, &w); err != nil {
			return f.fail(c, http.StatusOK, forge.ErrUnavailable, "malformed check run: "+err.Error(), "")
		}
		var sum []string
		for _, s := range []string{str(w.Output.Title), str(w.Output.Summary)} {
			if s = strings.TrimSpace(s); s != "" {
				sum = append(sum, s)
			}
		}
		u := str(w.DetailsURL)
		if u == "" {
			u = w.HTMLURL
		}
		st.Checks = append(st.Checks, forge.Check{ID: w.ID, Name: w.Name, Status: w.Status, Conclusion: str(w.Conclusion),
			Summary: strings.Join(sum, "\n\n"), URL: u})
	}
	return nil
}

// checkRunItems takes the check runs out of checks/list-for-ref's
// {total_count, check_runs}.
func checkRunItems(b []byte) ([]json.RawMessage, error) {
	var v struct {
		CheckRuns *[]json.RawMessage `json:"check_runs"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.CheckRuns == nil {
		return nil, fmt.Errorf("no check_runs")
	}
	return *v.CheckRuns, nil
}

func esc(s string) string { return url.PathEscape(s) }
