package github

// The fake's HTTP side for pull requests: pulls/list, pulls/create,
// pulls/get (ETag, If-None-Match → 304), pulls/list-reviews,
// pulls/list-review-comments and checks/list-for-ref, with the shapes of
// the OpenAPI description (pull-request, pull-request-simple,
// pull-request-review, pull-request-review-comment, check-run).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// routeKey is the route a request counts under: method and the path below
// the repository, numbers as {number}, a commit reference as {ref}.
func routeKey(method string, rest []string) string {
	parts := slices.Clone(rest)
	for i, p := range parts {
		if i > 0 && parts[i-1] == "commits" {
			parts[i] = "{ref}"
		} else if _, err := strconv.Atoi(p); err == nil {
			parts[i] = "{number}"
		}
	}
	return method + " /" + strings.Join(parts, "/")
}

// pullsRoute serves /pulls and below; rest starts with "pulls".
func (s *Server) pullsRoute(w http.ResponseWriter, r *http.Request, rest []string, body []byte) {
	switch {
	case len(rest) == 1 && r.Method == http.MethodGet:
		s.listPulls(w, r)
	case len(rest) == 1 && r.Method == http.MethodPost:
		s.createPull(w, body)
	case len(rest) >= 2:
		n, err := strconv.Atoi(rest[1])
		p := s.pulls[n]
		if err != nil || p == nil {
			writeJSON(w, http.StatusNotFound, msg("Not Found"))
			return
		}
		switch {
		case len(rest) == 2 && r.Method == http.MethodGet:
			s.conditional(w, r, s.wirePull(p, true))
		case len(rest) == 3 && rest[2] == "reviews" && r.Method == http.MethodGet:
			var out []any
			for _, rv := range s.reviews {
				if rv.Pull == n {
					out = append(out, s.wireReview(rv))
				}
			}
			s.page(w, r, out)
		case len(rest) == 3 && rest[2] == "comments" && r.Method == http.MethodGet:
			var out []any
			for _, c := range s.rcomments {
				if c.Pull == n {
					out = append(out, s.wireReviewComment(c))
				}
			}
			s.page(w, r, out)
		default:
			writeJSON(w, http.StatusNotFound, msg("Not Found"))
		}
	default:
		writeJSON(w, http.StatusNotFound, msg("Not Found"))
	}
}

// listPulls is pulls/list: state (open|closed|all, default open), head
// (user:ref-name; a head of another owner matches nothing), base, sort
// (created, updated; default created), direction (default desc), per_page,
// page.
func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		writeJSON(w, http.StatusUnprocessableEntity, validation("PullRequest", "state", "invalid", ""))
		return
	}
	headOwner, head, byHead := "", q.Get("head"), q.Has("head")
	if o, b, ok := strings.Cut(head, ":"); ok {
		headOwner, head = o, b
	}
	var sel []*Pull
	for _, p := range s.pulls {
		if state != "all" && p.State != state || q.Has("base") && p.Base != q.Get("base") {
			continue
		}
		if byHead && (headOwner != "" && !strings.EqualFold(headOwner, s.Owner) || p.Head != head) {
			continue
		}
		sel = append(sel, p)
	}
	asc := q.Get("direction") == "asc"
	by := q.Get("sort")
	sort.Slice(sel, func(i, j int) bool {
		a, b := sel[i], sel[j]
		less := a.Number < b.Number
		if by == "updated" && !a.UpdatedAt.Equal(b.UpdatedAt) {
			less = a.UpdatedAt.Before(b.UpdatedAt)
		}
		if asc {
			return less
		}
		return !less
	})
	out := make([]any, len(sel))
	for i, p := range sel {
		out[i] = s.wirePull(p, false)
	}
	s.page(w, r, out)
}

// createPull is pulls/create: {title, head, base, body, draft}; 422
// Validation Failed for a missing field and, with GitHub's custom error,
// for a head that already has an open pull request.
func (s *Server) createPull(w http.ResponseWriter, body []byte) {
	var in struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if json.Unmarshal(body, &in) != nil {
		writeJSON(w, http.StatusBadRequest, msg("Problems parsing JSON"))
		return
	}
	for _, f := range [][2]string{{"head", in.Head}, {"base", in.Base}, {"title", in.Title}} {
		if f[1] == "" {
			writeJSON(w, http.StatusUnprocessableEntity, validation("PullRequest", f[0], "missing_field", ""))
			return
		}
	}
	head := in.Head
	if o, b, ok := strings.Cut(head, ":"); ok && strings.EqualFold(o, s.Owner) {
		head = b
	}
	if head == in.Base {
		writeJSON(w, http.StatusUnprocessableEntity, validation("PullRequest", "", "custom", "No commits between "+in.Base+" and "+head))
		return
	}
	for _, p := range s.pulls {
		if p.Head == head && p.State == "open" {
			writeJSON(w, http.StatusUnprocessableEntity, validation("PullRequest", "", "custom",
				"A pull request already exists for "+s.Owner+":"+head+"."))
			return
		}
	}
	p := s.openPull(head, in.Base, in.Title, in.Body, Author, in.Draft)
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s/pulls/%d", s.URL, s.Owner, s.Repo, p.Number))
	writeJSON(w, http.StatusCreated, s.wirePull(p, true))
}

// checkRuns is checks/list-for-ref: ref a commit sha or a branch name;
// check_name, status and filter (latest, the default: the newest run of
// each name; all) narrow it; {total_count, check_runs} paged.
func (s *Server) checkRuns(w http.ResponseWriter, r *http.Request, ref string) {
	q := r.URL.Query()
	sha := ref
	if b, ok := s.branches[strings.TrimPrefix(ref, "heads/")]; ok {
		sha = b
	}
	var sel []CheckRun
	for _, c := range s.checks {
		if c.SHA != sha || q.Has("check_name") && c.Name != q.Get("check_name") || q.Has("status") && c.Status != q.Get("status") {
			continue
		}
		sel = append(sel, c)
	}
	if q.Get("filter") != "all" {
		newest := map[string]int64{}
		for _, c := range sel {
			newest[c.Name] = max(newest[c.Name], c.ID)
		}
		sel = slices.DeleteFunc(sel, func(c CheckRun) bool { return c.ID != newest[c.Name] })
	}
	out := make([]any, len(sel))
	for i, c := range sel {
		out[i] = s.wireCheckRun(c)
	}
	s.pageWith(w, r, out, func(items []any) any { return map[string]any{"total_count": len(sel), "check_runs": items} })
}

// conditional answers v with its ETag, or 304 when If-None-Match names it.
func (s *Server) conditional(w http.ResponseWriter, r *http.Request, v any) {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (s *Server) user(login string) any {
	if login == "" {
		return nil
	}
	return map[string]any{"login": login, "id": len(login), "type": "User", "html_url": "https://github.com/" + login}
}

func stamp(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.Format(time.RFC3339)
}

// wirePull is pull-request (full: pulls/get, pulls/create) or
// pull-request-simple (pulls/list: no merged, merged_by, counts).
func (s *Server) wirePull(p *Pull, full bool) map[string]any {
	repo := map[string]any{"id": 1, "name": s.Repo, "full_name": s.Owner + "/" + s.Repo, "owner": s.user(s.Owner)}
	api := fmt.Sprintf("%s/repos/%s/%s", s.URL, s.Owner, s.Repo)
	m := map[string]any{
		"id": 200000 + p.Number, "node_id": fmt.Sprintf("PR_%d", p.Number), "number": p.Number,
		"url":       fmt.Sprintf("%s/pulls/%d", api, p.Number),
		"html_url":  fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.Owner, s.Repo, p.Number),
		"issue_url": fmt.Sprintf("%s/issues/%d", api, p.Number),
		"state":     p.State, "locked": false, "title": p.Title, "body": p.Body, "draft": p.Draft,
		"user":       s.user(p.User),
		"head":       map[string]any{"label": s.Owner + ":" + p.Head, "ref": p.Head, "sha": p.HeadSHA, "repo": repo, "user": s.user(s.Owner)},
		"base":       map[string]any{"label": s.Owner + ":" + p.Base, "ref": p.Base, "sha": shaOf(p.Base), "repo": repo, "user": s.user(s.Owner)},
		"created_at": p.CreatedAt.Format(time.RFC3339), "updated_at": p.UpdatedAt.Format(time.RFC3339),
		"closed_at": stamp(p.ClosedAt), "merged_at": stamp(p.MergedAt), "merge_commit_sha": nil,
		"author_association": "MEMBER",
	}
	if full {
		m["merged"] = p.Merged
		m["merged_by"] = s.user(p.MergedBy)
		m["mergeable"] = nil
		m["comments"] = s.count(p.Number)
		rc := 0
		for _, c := range s.rcomments {
			if c.Pull == p.Number {
				rc++
			}
		}
		m["review_comments"] = rc
	}
	return m
}

func (s *Server) wireReview(rv Review) map[string]any {
	m := map[string]any{"id": rv.ID, "node_id": fmt.Sprintf("PRR_%d", rv.ID), "user": s.user(rv.User), "body": rv.Body,
		"state": rv.State, "commit_id": rv.CommitID, "author_association": "MEMBER",
		"html_url":         fmt.Sprintf("https://github.com/%s/%s/pull/%d#pullrequestreview-%d", s.Owner, s.Repo, rv.Pull, rv.ID),
		"pull_request_url": fmt.Sprintf("%s/repos/%s/%s/pulls/%d", s.URL, s.Owner, s.Repo, rv.Pull)}
	if rv.State != "PENDING" {
		m["submitted_at"] = rv.SubmittedAt.Format(time.RFC3339)
	}
	return m
}

func (s *Server) wireReviewComment(c ReviewComment) map[string]any {
	var rid any
	if c.ReviewID != 0 {
		rid = c.ReviewID
	}
	return map[string]any{"id": c.ID, "node_id": fmt.Sprintf("PRRC_%d", c.ID), "pull_request_review_id": rid,
		"diff_hunk": "@@ -1,1 +1,1 @@", "path": c.Path, "position": c.Line, "original_position": c.Line,
		"commit_id": c.CommitID, "original_commit_id": c.CommitID, "user": s.user(c.User), "body": c.Body,
		"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.CreatedAt.Format(time.RFC3339),
		"html_url":         fmt.Sprintf("https://github.com/%s/%s/pull/%d#discussion_r%d", s.Owner, s.Repo, c.Pull, c.ID),
		"pull_request_url": fmt.Sprintf("%s/repos/%s/%s/pulls/%d", s.URL, s.Owner, s.Repo, c.Pull),
		"line":             c.Line, "original_line": c.Line, "side": "RIGHT", "author_association": "MEMBER"}
}

func (s *Server) wireCheckRun(c CheckRun) map[string]any {
	return map[string]any{"id": c.ID, "node_id": fmt.Sprintf("CR_%d", c.ID), "head_sha": c.SHA, "external_id": "",
		"url":      fmt.Sprintf("%s/repos/%s/%s/check-runs/%d", s.URL, s.Owner, s.Repo, c.ID),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/runs/%d", s.Owner, s.Repo, c.ID), "details_url": nullIf(c.DetailsURL),
		"status": c.Status, "conclusion": nullIf(c.Conclusion), "name": c.Name,
		"started_at": c.StartedAt.Format(time.RFC3339), "completed_at": stamp(c.CompletedAt),
		"output":      map[string]any{"title": nullIf(c.Title), "summary": nullIf(c.Summary), "text": nil, "annotations_count": 0},
		"check_suite": map[string]any{"id": 5000 + c.ID}, "app": map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
		"pull_requests": []any{}}
}

// validation is GitHub's 422 body: "Validation Failed" and one error.
func validation(resource, field, code, message string) map[string]any {
	e := map[string]any{"resource": resource, "code": code}
	if field != "" {
		e["field"] = field
	}
	if message != "" {
		e["message"] = message
	}
	return map[string]any{"message": "Validation Failed", "errors": []any{e},
		"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"}
}
