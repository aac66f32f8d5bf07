// Package linear is drover's tracker for Linear (GraphQL), with Symphony's
// key names: tracker.provider.project_slug (or the older top-level
// project_slug), active_states and terminal_states by workflow state name,
// the key from $LINEAR_API_KEY when api_key is absent.
package linear

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/tracker"
)

// DefaultEndpoint is Linear's GraphQL API.
const DefaultEndpoint = "https://api.linear.app/graphql"

const pageSize = 50

// Options configure a Tracker.
type Options struct {
	Config tracker.Config
	HTTP   *http.Client
	Now    func() time.Time
}

// Tracker is the issues of one Linear project.
type Tracker struct {
	cfg      tracker.Config
	http     *http.Client
	endpoint string
	now      func() time.Time

	mu     sync.Mutex
	states map[string]map[string]string // team id → state name → state id
	teams  map[string]string            // issue id → team id
	last   [32]byte                     // hash of the last candidate list
	seen   bool
	// dropped are default role states the project does not have.
	dropped []string
}

// New builds the tracker from tracker: settings (validated by config).
func New(o Options) *Tracker {
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	ep := o.Config.Endpoint
	if ep == "" {
		ep = DefaultEndpoint
	}
	return &Tracker{cfg: o.Config, http: hc, endpoint: ep, now: now, states: map[string]map[string]string{}, teams: map[string]string{}}
}

// Kind implements tracker.Tracker.
func (t *Tracker) Kind() string { return tracker.KindLinear }

// Caps implements tracker.Tracker: workflow states and comments; labels
// are not written.
func (t *Tracker) Caps() tracker.Caps { return tracker.Caps{States: true, Comments: true} }

// gqlError is one entry of a GraphQL answer's errors.
type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code string `json:"code"`
	} `json:"extensions"`
}

// call sends one GraphQL document. Linear's rate limit is told by
// structure: HTTP 429, or an error whose extensions.code is RATELIMITED,
// waiting until X-RateLimit-Requests-Reset (ms since the epoch) or a
// minute. Evidence: Linear's API docs, "Rate limiting".
func (t *Tracker) call(ctx context.Context, op, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"operationName": op, "query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", t.cfg.APIKey) // a personal API key is sent as is
	req.Header.Set("User-Agent", "drover")
	resp, err := t.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s: %v", tracker.ErrUnavailable, op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: reading the answer: %v", tracker.ErrUnavailable, op, err)
	}
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	decodeErr := json.Unmarshal(raw, &env)
	for _, e := range env.Errors {
		if e.Extensions.Code == "RATELIMITED" {
			return t.rateLimited(resp.Header, e.Message)
		}
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return t.rateLimited(resp.Header, string(raw))
	case resp.StatusCode == http.StatusUnauthorized || hasCode(env.Errors, "AUTHENTICATION_ERROR"):
		return fmt.Errorf("%w: %s: Linear refused the API key (%d); check tracker.api_key / $LINEAR_API_KEY", tracker.ErrUnavailable, op, resp.StatusCode)
	case resp.StatusCode >= 500:
		return fmt.Errorf("%w: %s: %d", tracker.ErrUnavailable, op, resp.StatusCode)
	case decodeErr != nil:
		return fmt.Errorf("%w: %s: malformed answer: %v", tracker.ErrUnavailable, op, decodeErr)
	case len(env.Errors) > 0:
		if op == "DroverMove" || op == "DroverComment" { // a write Linear would not make
			return fmt.Errorf("%w: %s: %s", tracker.ErrRefused, op, env.Errors[0].Message)
		}
		return fmt.Errorf("%w: %s: %s", tracker.ErrUnavailable, op, env.Errors[0].Message)
	case resp.StatusCode != http.StatusOK || len(env.Data) == 0 || string(env.Data) == "null":
		return fmt.Errorf("%w: %s: %d without data", tracker.ErrUnavailable, op, resp.StatusCode)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("%w: %s: malformed data: %v", tracker.ErrUnavailable, op, err)
	}
	return nil
}

func hasCode(es []gqlError, code string) bool {
	for _, e := range es {
		if e.Extensions.Code == code {
			return true
		}
	}
	return false
}

func (t *Tracker) rateLimited(h http.Header, msg string) error {
	until := t.now().Add(time.Minute)
	if ms, err := strconv.ParseInt(h.Get("X-RateLimit-Requests-Reset"), 10, 64); err == nil && ms > 0 {
		until = time.UnixMilli(ms)
	}
	return &tracker.RateLimitError{Until: until, Msg: msg}
}

// Check implements tracker.Tracker: the project exists and every state
// tracker.roles and active_states name is a workflow state of its teams.
func (t *Tracker) Check(ctx context.Context) error {
	var out struct {
		Projects struct {
			Nodes []struct {
				ID    string `json:"id"`
				Teams struct {
					Nodes []struct {
						ID     string `json:"id"`
						States struct {
							Nodes []struct{ ID, Name, Type string } `json:"nodes"`
						} `json:"states"`
					} `json:"nodes"`
				} `json:"teams"`
			} `json:"nodes"`
		} `json:"projects"`
	}
	if err := t.call(ctx, "DroverProject", qProject, map[string]any{"slug": t.cfg.ProjectSlug}, &out); err != nil {
		return err
	}
	if len(out.Projects.Nodes) == 0 {
		return fmt.Errorf("tracker.provider.project_slug: no Linear project %q, or the API key cannot see it", t.cfg.ProjectSlug)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	names := map[string]bool{}
	for _, tm := range out.Projects.Nodes[0].Teams.Nodes {
		m := map[string]string{}
		for _, s := range tm.States.Nodes {
			m[s.Name] = s.ID
			names[s.Name] = true
		}
		t.states[tm.ID] = m
	}
	for _, r := range board.Roles {
		m, ok := t.cfg.Roles[r]
		if !ok || m.State == "" || names[m.State] {
			continue
		}
		if slices.Contains(t.cfg.RolesSet, r) {
			return fmt.Errorf("tracker.roles.%s.state: %q is not a workflow state of project %s (states: %s)", r, m.State, t.cfg.ProjectSlug, strings.Join(sortedKeys(names), ", "))
		}
		// A default the project lacks: that role shows as comments only.
		t.dropped = append(t.dropped, fmt.Sprintf("%s (default state %q)", r, m.State))
		roles := maps.Clone(t.cfg.Roles)
		delete(roles, r)
		t.cfg.Roles = roles
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Dropped names the default role states Check found missing from the
// project; those roles are shown by comments only.
func (t *Tracker) Dropped() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.dropped)
}

// wire is an issue as the documents above ask for it.
type wire struct {
	ID          string  `json:"id"`
	Identifier  string  `json:"identifier"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Priority    float64 `json:"priority"`
	URL         string  `json:"url"`
	UpdatedAt   time.Time
	State       struct{ ID, Name, Type string } `json:"state"`
	Team        struct{ ID string }             `json:"team"`
	Labels      struct {
		Nodes []struct{ Name string } `json:"nodes"`
	} `json:"labels"`
	InverseRelations struct {
		Nodes []struct {
			Type  string `json:"type"`
			Issue struct{ ID string }
		} `json:"nodes"`
	} `json:"inverseRelations"`
}

// nodes reads a list of issues one node at a time, so one issue Linear
// sends in a shape drover cannot read holds only that issue: it comes back
// with its id, identifier and address and the fault. A node without even
// an id is the answer's fault.
func (t *Tracker) nodes(op string, raws []json.RawMessage) ([]tracker.Issue, error) {
	out := make([]tracker.Issue, 0, len(raws))
	for _, raw := range raws {
		var w wire
		err := json.Unmarshal(raw, &w)
		if err == nil {
			out = append(out, t.issueOf(w))
			continue
		}
		var id struct{ ID, Identifier, URL string }
		if json.Unmarshal(raw, &id) != nil || id.ID == "" {
			return nil, fmt.Errorf("%w: %s: malformed data: a node that is not an issue: %v", tracker.ErrUnavailable, op, err)
		}
		out = append(out, tracker.Issue{ID: id.ID, Key: id.Identifier, URL: id.URL,
			Fault: "Linear's answer for it does not decode as an issue (" + err.Error() + "); its card keeps its last good input"})
	}
	return out, nil
}

func (t *Tracker) issueOf(w wire) tracker.Issue {
	is := tracker.Issue{ID: w.ID, Key: w.Identifier, URL: w.URL, Title: w.Title, State: w.State.Name, UpdatedAt: w.UpdatedAt,
		Priority: int(w.Priority)}
	if w.Description != nil {
		is.Body = *w.Description
	}
	for _, l := range w.Labels.Nodes {
		is.Labels = append(is.Labels, l.Name)
	}
	for _, r := range w.InverseRelations.Nodes {
		if r.Type == "blocks" && r.Issue.ID != "" { // r.Issue blocks this one
			is.BlockedBy = append(is.BlockedBy, r.Issue.ID)
		}
	}
	is.Terminal = containsFold(t.cfg.TerminalStates, w.State.Name) || w.State.Type == "completed" || w.State.Type == "canceled"
	if w.State.Name == "" {
		is.Fault = "Linear's answer gives it no workflow state; drover cannot tell whether it is open"
	}
	t.teams[w.ID] = w.Team.ID
	return is
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(s)) {
			return true
		}
	}
	return false
}

// Candidates implements tracker.Tracker: the project's issues in an
// active state with every required label, page by page. Linear has no
// conditional requests: changed says whether the list differs from the last.
func (t *Tracker) Candidates(ctx context.Context) ([]tracker.Issue, bool, error) {
	var all []tracker.Issue
	var after any
	for {
		var out struct {
			Issues struct {
				Nodes    []json.RawMessage `json:"nodes"`
				PageInfo struct {
					HasNextPage bool   `json:"hasNextPage"`
					EndCursor   string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"issues"`
		}
		err := t.call(ctx, "DroverCandidates", qCandidates, map[string]any{"slug": t.cfg.ProjectSlug, "states": t.cfg.ActiveStates, "first": pageSize, "after": after}, &out)
		if err != nil {
			return nil, false, err
		}
		t.mu.Lock()
		page, err := t.nodes("DroverCandidates", out.Issues.Nodes)
		t.mu.Unlock()
		if err != nil {
			return nil, false, err
		}
		for _, is := range page {
			if is.Fault != "" || t.required(is) && !is.Terminal {
				all = append(all, is)
			}
		}
		if !out.Issues.PageInfo.HasNextPage {
			break
		}
		if out.Issues.PageInfo.EndCursor == "" {
			return nil, false, fmt.Errorf("%w: DroverCandidates: hasNextPage without an endCursor", tracker.ErrUnavailable)
		}
		after = out.Issues.PageInfo.EndCursor
	}
	b, _ := json.Marshal(all)
	sum := sha256.Sum256(b)
	t.mu.Lock()
	changed := !t.seen || sum != t.last
	t.last, t.seen = sum, true
	t.mu.Unlock()
	return all, changed, nil
}

func (t *Tracker) required(is tracker.Issue) bool {
	for _, l := range t.cfg.RequiredLabels {
		if !slices.ContainsFunc(is.Labels, func(x string) bool { return strings.EqualFold(x, l) }) {
			return false
		}
	}
	return true
}

// Refresh implements tracker.Tracker.
func (t *Tracker) Refresh(ctx context.Context, ids []string) (map[string]tracker.Issue, error) {
	out := map[string]tracker.Issue{}
	for start := 0; start < len(ids); start += pageSize {
		batch := ids[start:min(start+pageSize, len(ids))]
		var got struct {
			Issues struct {
				Nodes []json.RawMessage `json:"nodes"`
			} `json:"issues"`
		}
		if err := t.call(ctx, "DroverIssuesByID", qByIDs, map[string]any{"ids": batch, "first": len(batch)}, &got); err != nil {
			return nil, err
		}
		t.mu.Lock()
		page, err := t.nodes("DroverIssuesByID", got.Issues.Nodes)
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		for _, is := range page {
			out[is.ID] = is
		}
	}
	return out, nil
}

// Move implements tracker.Tracker: the issue goes to the workflow state
// tracker.roles names for the role (none named: nothing to write).
func (t *Tracker) Move(ctx context.Context, id string, _, to board.Role) error {
	name := t.cfg.Roles[to].State
	if name == "" {
		return nil
	}
	t.mu.Lock()
	stateID := t.states[t.teams[id]][name]
	t.mu.Unlock()
	if stateID == "" {
		return fmt.Errorf("%w: the issue's team has no workflow state %q (tracker.roles.%s.state)", tracker.ErrRefused, name, to)
	}
	var out struct {
		IssueUpdate struct{ Success bool } `json:"issueUpdate"`
	}
	if err := t.call(ctx, "DroverMove", mMove, map[string]any{"id": id, "stateId": stateID}, &out); err != nil {
		return err
	}
	if !out.IssueUpdate.Success {
		return fmt.Errorf("%w: issueUpdate to %q answered success: false", tracker.ErrRefused, name)
	}
	return nil
}

// Comment implements tracker.Tracker.
func (t *Tracker) Comment(ctx context.Context, id, body string) error {
	var out struct {
		CommentCreate struct{ Success bool } `json:"commentCreate"`
	}
	if err := t.call(ctx, "DroverComment", mComment, map[string]any{"issueId": id, "body": body}, &out); err != nil {
		return err
	}
	if !out.CommentCreate.Success {
		return fmt.Errorf("%w: commentCreate answered success: false", tracker.ErrRefused)
	}
	return nil
}

var errNoLabels = errors.New("drover writes no labels to Linear")

// AddLabels implements tracker.Tracker (Caps.Labels is false).
func (t *Tracker) AddLabels(context.Context, string, []string) error {
	return fmt.Errorf("%w: %w", tracker.ErrRefused, errNoLabels)
}

// RemoveLabels implements tracker.Tracker (Caps.Labels is false).
func (t *Tracker) RemoveLabels(context.Context, string, []string) error {
	return fmt.Errorf("%w: %w", tracker.ErrRefused, errNoLabels)
}

// CommentsSince implements tracker.Tracker.
func (t *Tracker) CommentsSince(ctx context.Context, id string, since time.Time) ([]tracker.Comment, error) {
	var out struct {
		Issue *struct {
			Comments struct {
				Nodes []struct {
					ID        string    `json:"id"`
					Body      string    `json:"body"`
					CreatedAt time.Time `json:"createdAt"`
					User      *struct{ Name string }
				} `json:"nodes"`
			} `json:"comments"`
		} `json:"issue"`
	}
	if err := t.call(ctx, "DroverComments", qComments, map[string]any{"id": id, "since": since.UTC().Format(time.RFC3339Nano)}, &out); err != nil {
		return nil, err
	}
	if out.Issue == nil {
		return nil, nil
	}
	var cs []tracker.Comment
	for _, c := range out.Issue.Comments.Nodes {
		author := "someone"
		if c.User != nil {
			author = c.User.Name
		}
		cs = append(cs, tracker.Comment{ID: c.ID, Author: author, Body: c.Body, At: c.CreatedAt})
	}
	slices.SortFunc(cs, func(a, b tracker.Comment) int { return a.At.Compare(b.At) })
	return cs, nil
}
