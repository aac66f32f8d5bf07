package github

import (
	"context"
	"encoding/json"
	"errors"
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

// item is one issue of a listing as GitHub sent it: the issue, or, when
// its JSON does not decode as an issue, the fault with what could be read
// of it (its number and address).
type item struct {
	w     wire
	fault string
}

// decodeItems reads a listing one issue at a time, so one issue GitHub
// sends in a shape drover cannot read holds only that issue. An item
// without even a number is the answer's fault, as a body that is not a
// list is.
func decodeItems(method, path string, r response) ([]item, error) {
	var raws []json.RawMessage
	if err := decode(method, path, r, &raws); err != nil {
		return nil, err
	}
	out := make([]item, 0, len(raws))
	for _, raw := range raws {
		var w wire
		err := json.Unmarshal(raw, &w)
		if err == nil {
			out = append(out, item{w: w})
			continue
		}
		var id struct {
			Number  int    `json:"number"`
			HTMLURL string `json:"html_url"`
		}
		if json.Unmarshal(raw, &id) != nil || id.Number <= 0 {
			return nil, fmt.Errorf("%w: %s %s: malformed answer: an item that is not an issue: %v", tracker.ErrUnavailable, method, path, err)
		}
		out = append(out, item{w: wire{Number: id.Number, HTMLURL: id.HTMLURL}, fault: "GitHub's answer for it does not decode as an issue (" + err.Error() + "); its card keeps its last good input"})
	}
	return out, nil
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
	// An issue read only in part is read again from the whole listing
	// (conditional pages), not left to the hourly one: a delta lists it
	// again only when it changes.
	if t.cache == nil || now.Sub(t.lastFull) >= t.fullEvery || t.partial() {
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

// partial reports whether a cached issue carries a fault.
func (t *Tracker) partial() bool {
	for _, is := range t.cache {
		if is.Fault != "" {
			return true
		}
	}
	return false
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
	items []item
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
			if pg.items, err = decodeItems(http.MethodGet, path, r); err != nil {
				return err
			}
			pg.etag, pg.next = r.header.Get("ETag"), t.c.nextLink(r.header)
			t.pages[path] = pg
		default:
			return fmt.Errorf("%w: listing issues: %d %s", tracker.ErrUnavailable, r.status, message(r.body))
		}
		for _, it := range pg.items {
			w := it.w
			if it.fault != "" {
				cache[strconv.Itoa(w.Number)] = t.faulty(w, it.fault)
				continue
			}
			is := t.issueOf(w)
			if t.candidate(w, is) {
				if old, ok := t.cache[is.ID]; ok && sameIssue(old, is) && old.Fault == "" {
					is.BlockedBy = old.BlockedBy // the dependencies read with it still hold
				} else if err := t.dependencies(ctx, w, &is, old); err != nil {
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
		page, err := decodeItems(http.MethodGet, path, r)
		if err != nil {
			return false, err
		}
		if first {
			t.etag = r.header.Get("ETag")
			first = false
		}
		for _, it := range page {
			w := it.w
			if it.fault != "" {
				t.cache[strconv.Itoa(w.Number)] = t.faulty(w, it.fault)
				changed = true
				continue
			}
			is := t.issueOf(w)
			old, had := t.cache[is.ID]
			if t.candidate(w, is) {
				if !had || !sameIssue(old, is) || old.Fault != "" {
					changed = true
					if err := t.dependencies(ctx, w, &is, old); err != nil {
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

// faulty is the issue of a listing item GitHub sent in a shape drover
// cannot read: its number and address, and the fault.
func (t *Tracker) faulty(w wire, fault string) tracker.Issue {
	return tracker.Issue{ID: strconv.Itoa(w.Number), Key: fmt.Sprintf("%s#%d", t.cfg.Repo, w.Number), URL: w.HTMLURL, Fault: fault}
}

// dependencies adds the issues GitHub's issue dependencies say w is
// blocked by (one request, only for an issue whose summary counts any).
// A repository without the feature answers 404: nothing to add. When
// GitHub fails for that one issue's dependencies (not a rate limit), the
// issue keeps the blockers it had (old) and carries the fault; the next
// listing reads them again.
func (t *Tracker) dependencies(ctx context.Context, w wire, is *tracker.Issue, old tracker.Issue) error {
	if w.Deps == nil || w.Deps.TotalBlockedBy == 0 {
		return nil
	}
	err := t.listBlockers(ctx, w, is)
	var rl *tracker.RateLimitError
	if err == nil || ctx.Err() != nil || errors.As(err, &rl) || !errors.Is(err, tracker.ErrUnavailable) {
		return err
	}
	is.BlockedBy = old.BlockedBy
	is.Fault = "its dependencies (blocked by) could not be listed: " + err.Error()
	return nil
}

func (t *Tracker) listBlockers(ctx context.Context, w wire, is *tracker.Issue) error {
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
	return a.UpdatedAt.Equal(b.UpdatedAt) && a.Title == b.Title && a.Body == b.Body && slices.Equal(a.Labels, b.Labels) && a.State == b.State &&
		a.Fault == b.Fault
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
			if w.State != "open" && w.State != "closed" {
				is := out[id]
				is.Fault = fmt.Sprintf("GitHub gives it the state %q, which is neither open nor closed", excerptState(w.State))
				out[id] = is
			}
		case http.StatusNotFound, http.StatusGone, http.StatusMovedPermanently:
		default:
			return nil, fmt.Errorf("%w: GET %s: %d %s", tracker.ErrUnavailable, p, r.status, message(r.body))
		}
	}
	return out, nil
}

// excerptState is a state name as a fault quotes it: one short line.
func excerptState(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
