package github

// The fake's HTTP side: routing, the issue endpoints, listings with pages
// and ETags, and the JSON shapes GitHub answers with.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/testkit/faketracker"
)

func (s *Server) route(w http.ResponseWriter, r *http.Request, body []byte) {
	base := "/repos/" + s.Owner + "/" + s.Repo
	p := r.URL.Path
	rest := strings.Split(strings.Trim(strings.TrimPrefix(p, base), "/"), "/")
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	if p == base || strings.HasPrefix(p, base+"/") {
		s.counts[routeKey(r.Method, rest)]++
	} else {
		s.counts[r.Method+" "+p]++
	}
	if s.Faulted(w, Route{r.Method, r.URL.RequestURI()}) {
		return
	}
	s.rateHeaders(w.Header())
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeJSON(w, http.StatusUnauthorized, msg("Bad credentials"))
		return
	}
	if p != base && !strings.HasPrefix(p, base+"/") {
		writeJSON(w, http.StatusNotFound, msg("Not Found"))
		return
	}
	switch {
	case rest[0] == "pulls":
		s.pullsRoute(w, r, rest, body)
	case len(rest) == 3 && rest[0] == "commits" && rest[2] == "check-runs" && r.Method == http.MethodGet:
		s.checkRuns(w, r, rest[1])
	case len(rest) == 1 && rest[0] == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"id": 1, "name": s.Repo, "full_name": s.Owner + "/" + s.Repo, "has_issues": true})
	case len(rest) == 1 && rest[0] == "labels" && r.Method == http.MethodPost:
		var in struct{ Name, Color, Description string }
		if json.Unmarshal(body, &in) != nil || in.Name == "" {
			writeJSON(w, http.StatusUnprocessableEntity, msg("Validation Failed"))
			return
		}
		if s.labels[in.Name] {
			writeJSON(w, http.StatusUnprocessableEntity, msg("Validation Failed: already_exists"))
			return
		}
		s.labels[in.Name] = true
		writeJSON(w, http.StatusCreated, label(in.Name))
	case len(rest) == 2 && rest[0] == "labels" && r.Method == http.MethodGet:
		if !s.labels[rest[1]] {
			writeJSON(w, http.StatusNotFound, msg("Not Found"))
			return
		}
		writeJSON(w, http.StatusOK, label(rest[1]))
	case len(rest) == 1 && rest[0] == "issues" && r.Method == http.MethodGet:
		s.list(w, r)
	case len(rest) >= 2 && rest[0] == "issues" && s.Fails(rest[1]):
		writeJSON(w, http.StatusInternalServerError, msg("Server Error"))
	case len(rest) >= 2 && rest[0] == "issues":
		n, err := strconv.Atoi(rest[1])
		is := s.issues[n]
		if err != nil || is == nil {
			if err == nil && n <= len(s.issues)+1000 && n > 0 && s.deleted(n) {
				writeJSON(w, http.StatusGone, msg("This issue was deleted"))
				return
			}
			writeJSON(w, http.StatusNotFound, msg("Not Found"))
			return
		}
		s.issue(w, r, is, rest[2:], body)
	default:
		writeJSON(w, http.StatusNotFound, msg("Not Found"))
	}
}

// rateHeaders are GitHub's X-RateLimit-* headers: the fake never runs out
// (faults inject limits), but a client sees what GitHub sends.
func (s *Server) rateHeaders(h http.Header) {
	s.used++
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(5000-s.used, 1)))
	h.Set("X-RateLimit-Used", strconv.Itoa(min(s.used, 4999)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.now.Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

// deleted: numbers below the highest ever issued that are gone were deleted.
func (s *Server) deleted(n int) bool {
	for k := range s.issues {
		if k > n {
			return true
		}
	}
	return false
}

func (s *Server) issue(w http.ResponseWriter, r *http.Request, is *Issue, rest []string, body []byte) {
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.wire(is))
	case len(rest) == 0 && r.Method == http.MethodPatch:
		var in struct {
			State       *string `json:"state"`
			StateReason *string `json:"state_reason"`
		}
		if json.Unmarshal(body, &in) != nil {
			writeJSON(w, http.StatusBadRequest, msg("Problems parsing JSON"))
			return
		}
		if in.State != nil {
			if *in.State != "open" && *in.State != "closed" {
				writeJSON(w, http.StatusUnprocessableEntity, msg("Validation Failed"))
				return
			}
			t := s.tick()
			is.State, is.UpdatedAt = *in.State, t
			if *in.State == "closed" {
				is.ClosedAt = &t
			} else {
				is.ClosedAt = nil
			}
		}
		if in.StateReason != nil {
			is.StateReason = *in.StateReason
		}
		writeJSON(w, http.StatusOK, s.wire(is))
	case len(rest) == 1 && rest[0] == "labels" && r.Method == http.MethodPost:
		var in struct {
			Labels []string `json:"labels"`
		}
		if json.Unmarshal(body, &in) != nil {
			writeJSON(w, http.StatusBadRequest, msg("Problems parsing JSON"))
			return
		}
		for _, l := range in.Labels {
			if s.Refuses(l) {
				writeJSON(w, http.StatusUnprocessableEntity, msg("Validation Failed: label "+l+" may not be set"))
				return
			}
		}
		for _, l := range in.Labels {
			s.labels[l] = true
			if !slices.Contains(is.Labels, l) {
				is.Labels = append(is.Labels, l)
			}
		}
		is.UpdatedAt = s.tick()
		writeJSON(w, http.StatusOK, labels(is.Labels))
	case len(rest) == 2 && rest[0] == "labels" && r.Method == http.MethodDelete:
		i := slices.Index(is.Labels, rest[1])
		if i < 0 {
			writeJSON(w, http.StatusNotFound, msg("Label does not exist"))
			return
		}
		is.Labels = slices.Delete(is.Labels, i, i+1)
		is.UpdatedAt = s.tick()
		writeJSON(w, http.StatusOK, labels(is.Labels))
	case len(rest) == 1 && rest[0] == "comments" && r.Method == http.MethodPost:
		var in struct {
			Body string `json:"body"`
		}
		if json.Unmarshal(body, &in) != nil || in.Body == "" {
			writeJSON(w, http.StatusUnprocessableEntity, msg("Validation Failed"))
			return
		}
		c := s.addComment(is.Number, "drover-bot", in.Body)
		writeJSON(w, http.StatusCreated, s.wireComment(c))
	case len(rest) == 2 && rest[0] == "dependencies" && rest[1] == "blocked_by" && r.Method == http.MethodGet:
		var out []any
		for _, b := range is.BlockedBy {
			if d := s.issues[b]; d != nil {
				out = append(out, s.wire(d))
			}
		}
		s.page(w, r, out)
	case len(rest) == 1 && rest[0] == "comments" && r.Method == http.MethodGet:
		var since time.Time
		if v := r.URL.Query().Get("since"); v != "" {
			since, _ = time.Parse(time.RFC3339, v)
		}
		var out []any
		for _, c := range s.comments {
			if c.Issue == is.Number && !c.CreatedAt.Before(since) {
				out = append(out, s.wireComment(c))
			}
		}
		s.page(w, r, out)
	default:
		writeJSON(w, http.StatusNotFound, msg("Not Found"))
	}
}

// list is issues/list-for-repo: state, labels (all of them), sort
// (created, updated), direction, since (updated at or after), per_page
// (≤100), page; pull requests are listed too, with a pull_request key.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, msg("Validation Failed: since"))
			return
		}
		since = t
	}
	var sel []*Issue
	for _, is := range s.issues {
		if state != "all" && is.State != state || is.UpdatedAt.Before(since) {
			continue
		}
		ok := true
		for _, l := range want {
			ok = ok && slices.Contains(is.Labels, l)
		}
		if ok {
			sel = append(sel, is)
		}
	}
	by := q.Get("sort")
	asc := q.Get("direction") == "asc"
	sort.Slice(sel, func(i, j int) bool {
		a, b := sel[i], sel[j]
		less := a.Number < b.Number
		if by == "updated" && !a.UpdatedAt.Equal(b.UpdatedAt) {
			less = a.UpdatedAt.Before(b.UpdatedAt)
		}
		if !asc {
			return !less
		}
		return less
	})
	out := make([]any, len(sel))
	for i, is := range sel {
		out[i] = s.wire(is)
	}
	s.page(w, r, out)
}

// page writes one page of items with GitHub's Link header and an ETag; an
// If-None-Match naming the ETag answers 304 with no body.
func (s *Server) page(w http.ResponseWriter, r *http.Request, items []any) {
	s.pageWith(w, r, items, func(page []any) any { return page })
}

// pageWith is page for an answer that wraps its page of items (the
// check-runs listing's {total_count, check_runs}).
func (s *Server) pageWith(w http.ResponseWriter, r *http.Request, items []any, wrap func([]any) any) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, _ := strconv.Atoi(q.Get("page"))
	pg = max(pg, 1)
	from, to := min((pg-1)*per, len(items)), min(pg*per, len(items))
	b, _ := json.Marshal(wrap(append([]any{}, items[from:to]...)))
	sum := sha256.Sum256(b)
	etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if to < len(items) {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("page", strconv.Itoa(pg+1))
		last := (len(items) + per - 1) / per
		lq := url.Values{}
		for k, v := range nq {
			lq[k] = v
		}
		lq.Set("page", strconv.Itoa(last))
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next", <%s%s?%s>; rel="last"`, s.URL, r.URL.Path, nq.Encode(), s.URL, r.URL.Path, lq.Encode()))
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (s *Server) wire(is *Issue) map[string]any {
	ls := make([]any, len(is.Labels))
	for i, l := range is.Labels {
		ls[i] = label(l)
	}
	m := map[string]any{
		"id": 100000 + is.Number, "node_id": fmt.Sprintf("I_%d", is.Number), "number": is.Number, "title": is.Title, "body": is.Body,
		"state": is.State, "state_reason": nullIf(is.StateReason), "labels": ls, "locked": false,
		"url":      fmt.Sprintf("%s/repos/%s/%s/issues/%d", s.URL, s.Owner, s.Repo, is.Number),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/issues/%d", s.Owner, s.Repo, is.Number),
		"user":     map[string]any{"login": "alice", "id": 1, "type": "User"},
		"comments": s.count(is.Number), "created_at": s.now.Format(time.RFC3339), "updated_at": is.UpdatedAt.Format(time.RFC3339),
		"closed_at": nil, "closed_by": s.user(is.ClosedBy),
	}
	if is.ClosedAt != nil {
		m["closed_at"] = is.ClosedAt.Format(time.RFC3339)
	}
	m["issue_dependencies_summary"] = map[string]any{"blocked_by": len(is.BlockedBy), "total_blocked_by": len(is.BlockedBy), "blocking": 0, "total_blocking": 0}
	if s.Corrupted(strconv.Itoa(is.Number)) {
		m["title"] = 42 // not a string
	}
	if is.PullRequest {
		m["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/repos/%s/%s/pulls/%d", s.URL, s.Owner, s.Repo, is.Number)}
		m["html_url"] = fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.Owner, s.Repo, is.Number)
	}
	return m
}

func (s *Server) count(n int) int {
	k := 0
	for _, c := range s.comments {
		if c.Issue == n {
			k++
		}
	}
	return k
}

func (s *Server) wireComment(c Comment) map[string]any {
	return map[string]any{"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "body": c.Body,
		"user":       map[string]any{"login": c.User, "id": 2, "type": "User"},
		"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.CreatedAt.Format(time.RFC3339),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/issues/%d#issuecomment-%d", s.Owner, s.Repo, c.Issue, c.ID)}
}

func label(name string) map[string]any {
	return map[string]any{"id": len(name), "name": name, "color": "ededed", "default": false}
}

func labels(ls []string) []any {
	out := make([]any, len(ls))
	for i, l := range ls {
		out[i] = label(l)
	}
	return out
}

func nullIf(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func msg(m string) map[string]string {
	return map[string]string{"message": m, "documentation_url": "https://docs.github.com/rest"}
}

var writeJSON = faketracker.WriteJSON
