package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/tracker"
)

// What drover reads from GitHub: the candidates (whole and as changes),
// single issues, and their dependencies.

// wire is an issue as GitHub's REST API returns it (the fields drover reads).
type wire struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	State   string `json:"state"`
	HTMLURL string `json:"html_url"`
	Labels  []struct {
		Name string `json:"name"`
	} `json:"labels"`
	PullRequest *struct{} `json:"pull_request"`
	// Deps is GitHub's issue dependencies summary, where the repository has
	// issue dependencies (absent elsewhere).
	Deps *struct {
		TotalBlockedBy int `json:"total_blocked_by"`
	} `json:"issue_dependencies_summary"`
	UpdatedAt time.Time  `json:"updated_at"`
	ClosedAt  *time.Time `json:"closed_at"`
}

func (t *Tracker) issueOf(w wire) tracker.Issue {
	is := tracker.Issue{ID: strconv.Itoa(w.Number), Key: fmt.Sprintf("%s#%d", t.cfg.Repo, w.Number), URL: w.HTMLURL,
		Title: w.Title, Body: w.Body, State: w.State, UpdatedAt: w.UpdatedAt}
	for _, l := range w.Labels {
		is.Labels = append(is.Labels, l.Name)
	}
	is.Terminal = w.State == "closed"
	for _, s := range t.cfg.TerminalStates {
		if s == w.State || slices.Contains(is.Labels, s) {
			is.Terminal = true
		}
	}
	for _, m := range t.blockedBy.FindAllStringSubmatch(w.Body, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n != w.Number && !slices.Contains(is.BlockedBy, m[1]) {
			is.BlockedBy = append(is.BlockedBy, strconv.Itoa(n))
		}
	}
	return is
}

// candidate reports whether an issue may be dispatched: open, not a pull
// request, every required label, and one of active_states ("open" or a
// label name).
func (t *Tracker) candidate(w wire, is tracker.Issue) bool {
	if w.PullRequest != nil || w.State != "open" || is.Terminal {
		return false
	}
	for _, l := range t.cfg.RequiredLabels {
		if !slices.Contains(is.Labels, l) {
			return false
		}
	}
	for _, s := range t.cfg.ActiveStates {
		if s == "open" || slices.Contains(is.Labels, s) {
			return true
		}
	}
	return false
}

// Candidates implements tracker.Tracker.
func (t *Tracker) Candidates(ctx context.Context) ([]tracker.Issue, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.c.now()
	if t.cache == nil || now.Sub(t.lastFull) >= t.fullEvery {
		old := t.cache
		if err := t.full(ctx); err != nil {
			return nil, false, err
		}
		t.lastFull = now
		return t.list(), old == nil || !sameCache(old, t.cache), nil
	}
	changed, err := t.delta(ctx)
	if err != nil {
		return nil, false, err
	}
	return t.list(), changed, nil
}

func (t *Tracker) list() []tracker.Issue {
	out := make([]tracker.Issue, 0, len(t.cache))
	for _, is := range t.cache {
		out = append(out, is)
	}
	slices.SortFunc(out, func(a, b tracker.Issue) int {
		x, _ := strconv.Atoi(a.ID)
		y, _ := strconv.Atoi(b.ID)
		return x - y
	})
	return out
}

// page is one page of a full listing as last read.
type page struct {
	etag  string
	items []wire
	next  string
}

// full lists every open issue, page by page; each page is asked for with
// its last ETag, so an unchanged repository answers 304s.
func (t *Tracker) full(ctx context.Context) error {
	if t.pages == nil {
		t.pages = map[string]page{}
	}
	q := url.Values{"state": {"open"}, "per_page": {"100"}, "sort": {"created"}, "direction": {"asc"}}
	if len(t.cfg.RequiredLabels) > 0 {
		q.Set("labels", strings.Join(t.cfg.RequiredLabels, ","))
	}
	cache := map[string]tracker.Issue{}
	since := t.since
	path := t.base() + "/issues?" + q.Encode()
	for path != "" {
		var hdr http.Header
		old, had := t.pages[path]
		if had && old.etag != "" {
			hdr = http.Header{"If-None-Match": {old.etag}}
		}
		r, err := t.c.do(ctx, http.MethodGet, path, nil, hdr)
		if err != nil {
			return err
		}
		var pg page
		switch {
		case r.status == http.StatusNotModified && had:
			pg = old
		case r.status == http.StatusOK:
			if err := decode(http.MethodGet, path, r, &pg.items); err != nil {
				return err
			}
			pg.etag, pg.next = r.header.Get("ETag"), t.c.nextLink(r.header)
			t.pages[path] = pg
		default:
			return fmt.Errorf("%w: listing issues: %d %s", tracker.ErrUnavailable, r.status, message(r.body))
		}
		for _, w := range pg.items {
			is := t.issueOf(w)
			if t.candidate(w, is) {
				if old, ok := t.cache[is.ID]; ok && sameIssue(old, is) {
					is.BlockedBy = old.BlockedBy // the dependencies read with it still hold
				} else if err := t.dependencies(ctx, w, &is); err != nil {
					return err
				}
				cache[is.ID] = is
			}
			if w.UpdatedAt.After(since) {
				since = w.UpdatedAt
			}
		}
		path = pg.next
	}
	if !since.Equal(t.since) {
		t.etag = "" // the delta's URL changes with since
	}
	t.cache, t.since = cache, since
	return nil
}

// delta asks for the issues updated since the newest one seen (state=all:
// a closed issue comes back closed), conditionally: nothing new is a 304.
func (t *Tracker) delta(ctx context.Context) (bool, error) {
	q := url.Values{"state": {"all"}, "per_page": {"100"}, "sort": {"updated"}, "direction": {"asc"},
		"since": {t.since.UTC().Format(time.RFC3339)}}
	path := t.base() + "/issues?" + q.Encode()
	changed := false
	since := t.since
	first := true
	for path != "" {
		var hdr http.Header
		if first && t.etag != "" {
			hdr = http.Header{"If-None-Match": {t.etag}}
		}
		r, err := t.c.do(ctx, http.MethodGet, path, nil, hdr)
		if err != nil {
			return false, err
		}
		if r.status == http.StatusNotModified {
			return changed, nil
		}
		if r.status != http.StatusOK {
			return false, fmt.Errorf("%w: listing changed issues: %d %s", tracker.ErrUnavailable, r.status, message(r.body))
		}
		var page []wire
		if err := decode(http.MethodGet, path, r, &page); err != nil {
			return false, err
		}
		if first {
			t.etag = r.header.Get("ETag")
			first = false
		}
		for _, w := range page {
			is := t.issueOf(w)
			old, had := t.cache[is.ID]
			if t.candidate(w, is) {
				if !had || !sameIssue(old, is) {
					changed = true
					if err := t.dependencies(ctx, w, &is); err != nil {
						return false, err
					}
				} else {
					is.BlockedBy = old.BlockedBy
				}
				t.cache[is.ID] = is
			} else if had {
				delete(t.cache, is.ID)
				changed = true
			}
			if w.UpdatedAt.After(since) {
				since = w.UpdatedAt
			}
		}
		path = t.c.nextLink(r.header)
	}
	if !since.Equal(t.since) {
		t.since = since
		// The URL changes with since; its first answer sets the next ETag.
		t.etag = ""
	}
	return changed, nil
}

// dependencies adds the issues GitHub's issue dependencies say w is
// blocked by (one request, only for an issue whose summary counts any).
// A repository without the feature answers 404: nothing to add.
func (t *Tracker) dependencies(ctx context.Context, w wire, is *tracker.Issue) error {
	if w.Deps == nil || w.Deps.TotalBlockedBy == 0 {
		return nil
	}
	p := t.base() + "/issues/" + strconv.Itoa(w.Number) + "/dependencies/blocked_by?per_page=100"
	r, err := t.c.do(ctx, http.MethodGet, p, nil, nil)
	if err != nil {
		return err
	}
	switch r.status {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusGone:
		return nil
	default:
		return fmt.Errorf("%w: GET %s: %d %s", tracker.ErrUnavailable, p, r.status, message(r.body))
	}
	var deps []wire
	if err := decode(http.MethodGet, p, r, &deps); err != nil {
		return err
	}
	for _, d := range deps {
		if id := strconv.Itoa(d.Number); d.Number > 0 && d.Number != w.Number && !slices.Contains(is.BlockedBy, id) {
			is.BlockedBy = append(is.BlockedBy, id)
		}
	}
	return nil
}

func sameCache(a, b map[string]tracker.Issue) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if y, ok := b[k]; !ok || !sameIssue(x, y) {
			return false
		}
	}
	return true
}

func sameIssue(a, b tracker.Issue) bool {
	return a.UpdatedAt.Equal(b.UpdatedAt) && a.Title == b.Title && a.Body == b.Body && slices.Equal(a.Labels, b.Labels) && a.State == b.State
}

// Refresh implements tracker.Tracker: one GET per issue; 404, 410 (deleted)
// and 301 (transferred) mean gone.
func (t *Tracker) Refresh(ctx context.Context, ids []string) (map[string]tracker.Issue, error) {
	out := map[string]tracker.Issue{}
	for _, id := range ids {
		p := t.base() + "/issues/" + esc(id)
		r, err := t.c.do(ctx, http.MethodGet, p, nil, nil)
		if err != nil {
			return nil, err
		}
		switch r.status {
		case http.StatusOK:
			var w wire
			if err := decode(http.MethodGet, p, r, &w); err != nil {
				return nil, err
			}
			if w.Number == 0 {
				return nil, fmt.Errorf("%w: GET %s: the answer has no issue number", tracker.ErrUnavailable, p)
			}
			out[id] = t.issueOf(w)
		case http.StatusNotFound, http.StatusGone, http.StatusMovedPermanently:
		default:
			return nil, fmt.Errorf("%w: GET %s: %d %s", tracker.ErrUnavailable, p, r.status, message(r.body))
		}
	}
	return out, nil
}
