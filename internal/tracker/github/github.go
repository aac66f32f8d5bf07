package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/tracker"
)

// Options configure a Tracker.
type Options struct {
	Config tracker.Config
	HTTP   *http.Client     // nil: a client with a 30s timeout
	Now    func() time.Time // nil: time.Now
	// FullEvery is how often the candidates are listed whole rather than as
	// the changes since the last poll (catching deleted issues); 0: hourly.
	FullEvery time.Duration
}

// Tracker is GitHub Issues of one repository.
type Tracker struct {
	c         client
	cfg       tracker.Config
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
func (t *Tracker) Kind() string { return tracker.KindGitHub }

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
