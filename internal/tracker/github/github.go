package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/tracker"
)

// Options configure a Tracker.
type Options struct {
	Config config.Tracker
	HTTP   *http.Client     // nil: a client with a 30s timeout
	Now    func() time.Time // nil: time.Now
	// FullEvery is how often the candidates are listed whole rather than as
	// the changes since the last poll (catching deleted issues); 0: hourly.
	FullEvery time.Duration
}

// Tracker is GitHub Issues of one repository.
type Tracker struct {
	c         client
	cfg       config.Tracker
	owner     string
	repo      string
	blockedBy *regexp.Regexp
	fullEvery time.Duration

	mu       sync.Mutex
	pages    map[string]page          // full listings' pages by path: ETag and issues
	cache    map[string]tracker.Issue // open candidates by number
	etag     string                   // of the last delta listing
	since    time.Time                // newest updated_at seen
	lastFull time.Time
}

// New builds the tracker from tracker: settings (already validated by config).
func New(o Options) (*Tracker, error) {
	owner, name, ok := strings.Cut(o.Config.Repo, "/")
	if !ok {
		return nil, fmt.Errorf("tracker.repo: %q is not owner/name", o.Config.Repo)
	}
	re, err := regexp.Compile(o.Config.BlockedBy)
	if err != nil {
		return nil, fmt.Errorf("tracker.blocked_by_pattern: %v", err)
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	// A transferred issue answers 301; following it would read another
	// repository's issue as this one's.
	cp := *hc
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	now := o.Now
	if now == nil {
		now = time.Now
	}
	ep := strings.TrimRight(o.Config.Endpoint, "/")
	if ep == "" {
		ep = DefaultEndpoint
	}
	return &Tracker{c: client{http: &cp, endpoint: ep, token: o.Config.APIKey, now: now}, cfg: o.Config, owner: owner, repo: name,
		blockedBy: re, fullEvery: nzd(o.FullEvery, time.Hour)}, nil
}

func nzd(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// Kind implements tracker.Tracker.
func (t *Tracker) Kind() string { return config.TrackerGitHub }

// Caps implements tracker.Tracker.
func (t *Tracker) Caps() tracker.Caps {
	return tracker.Caps{Labels: true, States: true, Comments: true}
}

func (t *Tracker) base() string { return "/repos/" + esc(t.owner) + "/" + esc(t.repo) }

// Check implements tracker.Tracker: the repository is readable with the
// token and every label tracker.roles names exists; a missing one is
// created, and one the token cannot create is an error saying which.
func (t *Tracker) Check(ctx context.Context) error {
	r, err := t.c.do(ctx, http.MethodGet, t.base(), nil, nil)
	if err != nil {
		return err
	}
	switch r.status {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return fmt.Errorf("tracker.api_key: GitHub refused the token (401 %s); give a token with Issues read and write on %s", message(r.body), t.cfg.Repo)
	case http.StatusNotFound:
		return fmt.Errorf("tracker.repo: %s not found, or the token cannot see it (404); check the name and the token's repository access", t.cfg.Repo)
	default:
		return fmt.Errorf("tracker.repo: reading %s: %d %s", t.cfg.Repo, r.status, message(r.body))
	}
	for _, role := range board.Roles {
		m, ok := t.cfg.Roles[role]
		if !ok || m.Label == "" {
			continue
		}
		if err := t.ensureLabel(ctx, string(role), m.Label); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tracker) ensureLabel(ctx context.Context, role, name string) error {
	p := t.base() + "/labels/" + esc(name)
	r, err := t.c.do(ctx, http.MethodGet, p, nil, nil)
	if err != nil {
		return err
	}
	if r.status == http.StatusOK {
		return nil
	}
	if r.status != http.StatusNotFound {
		return fmt.Errorf("tracker.roles.%s.label: reading label %q: %d %s", role, name, r.status, message(r.body))
	}
	r, err = t.c.do(ctx, http.MethodPost, t.base()+"/labels", map[string]string{"name": name, "color": "5319e7", "description": "set by drover: the card is " + role}, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusCreated && r.status != http.StatusUnprocessableEntity { // 422: created meanwhile
		return fmt.Errorf("tracker.roles.%s.label: label %q does not exist in %s and the token cannot create it (%d %s); create it, or give the token Issues write", role, name, t.cfg.Repo, r.status, message(r.body))
	}
	return nil
}

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

// Move implements tracker.Tracker: the old role's label off, the new role's
// label on, then the issue's state when the roles' states differ.
func (t *Tracker) Move(ctx context.Context, id string, from, to board.Role) error {
	fr, tr := t.cfg.Roles[from], t.cfg.Roles[to]
	if fr.Label != "" && fr.Label != tr.Label {
		if err := t.RemoveLabels(ctx, id, []string{fr.Label}); err != nil {
			return err
		}
	}
	if tr.Label != "" {
		if err := t.AddLabels(ctx, id, []string{tr.Label}); err != nil {
			return err
		}
	}
	if tr.State != "" && tr.State != stateOr(fr.State) {
		body := map[string]string{"state": tr.State}
		if tr.State == "closed" {
			body["state_reason"] = "completed"
		}
		return t.write(ctx, http.MethodPatch, t.base()+"/issues/"+esc(id), body, http.StatusOK)
	}
	return nil
}

// stateOr is a role's issue state; a role that names none leaves it open.
func stateOr(s string) string {
	if s == "" {
		return "open"
	}
	return s
}

// Comment implements tracker.Tracker.
func (t *Tracker) Comment(ctx context.Context, id, body string) error {
	return t.write(ctx, http.MethodPost, t.base()+"/issues/"+esc(id)+"/comments", map[string]string{"body": body}, http.StatusCreated)
}

// AddLabels implements tracker.Tracker.
func (t *Tracker) AddLabels(ctx context.Context, id string, labels []string) error {
	return t.write(ctx, http.MethodPost, t.base()+"/issues/"+esc(id)+"/labels", map[string][]string{"labels": labels}, http.StatusOK)
}

// RemoveLabels implements tracker.Tracker; a label the issue does not have
// (404) is already removed.
func (t *Tracker) RemoveLabels(ctx context.Context, id string, labels []string) error {
	for _, l := range labels {
		p := t.base() + "/issues/" + esc(id) + "/labels/" + esc(l)
		r, err := t.c.do(ctx, http.MethodDelete, p, nil, nil)
		if err != nil {
			return err
		}
		if r.status != http.StatusOK && r.status != http.StatusNoContent && r.status != http.StatusNotFound {
			return refusedOrFailed(http.MethodDelete, p, r)
		}
	}
	return nil
}

func (t *Tracker) write(ctx context.Context, method, path string, body any, want int) error {
	r, err := t.c.do(ctx, method, path, body, nil)
	if err != nil {
		return err
	}
	if r.status != want && (r.status < 200 || r.status > 299) {
		return refusedOrFailed(method, path, r)
	}
	return nil
}

// CommentsSince implements tracker.Tracker.
func (t *Tracker) CommentsSince(ctx context.Context, id string, since time.Time) ([]tracker.Comment, error) {
	q := url.Values{"per_page": {"100"}, "since": {since.UTC().Format(time.RFC3339)}}
	path := t.base() + "/issues/" + esc(id) + "/comments?" + q.Encode()
	var out []tracker.Comment
	for path != "" {
		r, err := t.c.do(ctx, http.MethodGet, path, nil, nil)
		if err != nil {
			return nil, err
		}
		if r.status != http.StatusOK {
			return nil, fmt.Errorf("%w: listing comments of #%s: %d %s", tracker.ErrUnavailable, id, r.status, message(r.body))
		}
		var page []struct {
			ID   int64  `json:"id"`
			Body string `json:"body"`
			User struct {
				Login string `json:"login"`
			} `json:"user"`
			CreatedAt time.Time `json:"created_at"`
		}
		if err := decode(http.MethodGet, path, r, &page); err != nil {
			return nil, err
		}
		for _, c := range page {
			// GitHub stamps whole seconds: a comment in the second of since counts.
			if !c.CreatedAt.Before(since.Truncate(time.Second)) {
				out = append(out, tracker.Comment{ID: strconv.FormatInt(c.ID, 10), Author: c.User.Login, Body: c.Body, At: c.CreatedAt})
			}
		}
		path = t.c.nextLink(r.header)
	}
	return out, nil
}
