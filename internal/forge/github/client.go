// Package github is drover's Forge for GitHub: the pull request of a
// card's branch over GitHub's REST API (application/vnd.github+json,
// version 2022-11-28), and the webhook helpers that tell drover which pull
// request an event concerns.
//
// Operations (operation ids of GitHub's published OpenAPI description,
// github/rest-api-description, descriptions/api.github.com/
// api.github.com.2022-11-28.yaml, read at commit 0000036e42b5): pulls/list,
// pulls/create, pulls/get, pulls/list-reviews, pulls/list-review-comments,
// checks/list-for-ref and issues/get (who closed a pull request that was
// not merged: the pull request object does not say).
//
// Every read of PullState is conditional: with the ETags of the last read
// (carried in PullState.ETag) an idle pull request costs four 304s, which
// GitHub does not count against the rate limit.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/ghrest"
)

// DefaultTokenEnv is the variable the token is read from when
// Config.TokenEnv names none.
const DefaultTokenEnv = "GITHUB_TOKEN"

// Options configure a Forge.
type Options struct {
	Config forge.Config
	HTTP   *http.Client            // nil: a client with a 30s timeout
	Now    func() time.Time        // nil: time.Now
	Getenv func(key string) string // nil: os.Getenv
	// RetryWait is the first wait before listing again after GitHub said
	// the pull request exists (another node opened it) and the listing
	// did not show it yet; doubled each of 3 tries. 0: one second.
	RetryWait time.Duration
}

// Forge is GitHub's pull requests of one repository.
type Forge struct {
	owner, repo string
	endpoint    string
	token       string
	tokenEnv    string
	http        *http.Client
	now         func() time.Time
	retryWait   time.Duration
}

var _ forge.Forge = (*Forge)(nil)

// New builds the forge from workspace.git.pull_request; every bad setting
// is an error naming the key and the fix.
func New(o Options) (*Forge, error) {
	const key = "workspace.git.pull_request"
	c := o.Config
	if c.Kind != "" && c.Kind != "github" {
		return nil, fmt.Errorf("%s.provider: %q is not a forge drover knows (use github)", key, c.Kind)
	}
	owner, name, ok := strings.Cut(c.Repository, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%s.repo: %q is not owner/name (e.g. acme/app)", key, c.Repository)
	}
	ep := strings.TrimRight(c.Endpoint, "/")
	if ep == "" {
		ep = ghrest.DefaultEndpoint
	}
	if !strings.HasPrefix(ep, "https://") && !strings.HasPrefix(ep, "http://") {
		return nil, fmt.Errorf("%s.endpoint: %q is not an http(s) URL (GitHub Enterprise: https://HOST/api/v3)", key, c.Endpoint)
	}
	env := c.TokenEnv
	if env == "" {
		env = DefaultTokenEnv
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	token := c.APIKey
	if token == "" {
		token = getenv(env)
	}
	if token == "" {
		return nil, fmt.Errorf("%s.api_key: missing, and $%s is empty (api_key: $%s with that variable exported, holding a token that may write pull requests of %s)", key, env, env, c.Repository)
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	wait := o.RetryWait
	if wait <= 0 {
		wait = time.Second
	}
	return &Forge{owner: owner, repo: name, endpoint: ep, token: token, tokenEnv: env, http: hc, now: now, retryWait: wait}, nil
}

// response is a finished request: status, headers, body.
type response struct {
	status int
	header http.Header
	body   []byte
}

// call is one request: the operation it is (for errors) and what to send.
type call struct {
	op, method, path string
	in               any
	ifNoneMatch      string
}

func (c call) String() string { return c.method + " " + c.path }

func (f *Forge) repoPath() string { return "/repos/" + esc(f.owner) + "/" + esc(f.repo) }

// do sends one request. It answers 2xx, 304 and 422 as they came (the
// caller reads them) and every other status as a *forge.Error: 401 and a
// 403 that is no rate limit ErrAuth, 404 ErrNotFound, 403/429 rate limits
// a *forge.RateLimitError, 5xx and no answer ErrUnavailable, any other
// 4xx ErrRefused.
func (f *Forge) do(ctx context.Context, c call) (response, error) {
	var body io.Reader
	if c.in != nil {
		b, err := json.Marshal(c.in)
		if err != nil {
			return response{}, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, f.endpoint+c.path, body)
	if err != nil {
		return response{}, f.fail(c, 0, forge.ErrRefused, err.Error(), "")
	}
	ghrest.SetHeaders(req.Header, f.token)
	if c.in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.ifNoneMatch != "" {
		req.Header.Set("If-None-Match", c.ifNoneMatch)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return response{}, ctx.Err()
		}
		return response{}, f.fail(c, 0, forge.ErrUnavailable, err.Error(), "")
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return response{}, f.fail(c, resp.StatusCode, forge.ErrUnavailable, "reading the answer: "+err.Error(), "")
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	if l, ok := ghrest.RateLimit(r.status, r.header, r.body, f.now()); ok {
		return r, f.fail(c, r.status, &forge.RateLimitError{Until: l.Until, Secondary: l.Secondary, Msg: l.Msg}, "", "")
	}
	msg := ghrest.Message(b)
	switch {
	case r.status < 300, r.status == http.StatusNotModified, r.status == http.StatusUnprocessableEntity:
		return r, nil
	case r.status == http.StatusUnauthorized:
		return r, f.fail(c, r.status, forge.ErrAuth, msg, "check the token in $"+f.tokenEnv)
	case r.status == http.StatusForbidden:
		return r, f.fail(c, r.status, forge.ErrAuth, msg, "the token in $"+f.tokenEnv+" needs read and write access to pull requests of "+f.owner+"/"+f.repo)
	case r.status == http.StatusNotFound:
		return r, f.fail(c, r.status, forge.ErrNotFound, msg, "check workspace.git.pull_request.repo and that the token in $"+f.tokenEnv+" can see it")
	case r.status >= 500:
		return r, f.fail(c, r.status, forge.ErrUnavailable, msg, "")
	}
	return r, f.fail(c, r.status, forge.ErrRefused, msg, "")
}

func (f *Forge) fail(c call, status int, kind error, msg, fix string) *forge.Error {
	return &forge.Error{Repository: f.owner + "/" + f.repo, Op: c.op, Request: c.String(), Status: status, Msg: msg, Fix: fix, Err: kind}
}

// decode reads a JSON answer; a body that is not what GitHub documents is
// an outage, not an empty result.
func (f *Forge) decode(c call, r response, v any) error {
	if err := json.Unmarshal(r.body, v); err != nil {
		return f.fail(c, r.status, forge.ErrUnavailable, "malformed answer: "+err.Error(), "")
	}
	return nil
}

// listed is a whole listing: its items and, when it fit one page, the
// ETag a later conditional read can send (a listing of several pages is
// always read again: its first page's ETag would miss a change on a later
// one).
type listed struct {
	items       []json.RawMessage
	etag        string
	notModified bool
}

// list reads every page of c (following Link rel="next"); items takes a
// page's items out of its body (nil: the body is the array). With
// c.ifNoneMatch, an unchanged first page is notModified and nothing else.
func (f *Forge) list(ctx context.Context, c call, items func([]byte) ([]json.RawMessage, error)) (listed, error) {
	if items == nil {
		items = func(b []byte) ([]json.RawMessage, error) {
			var out []json.RawMessage
			return out, json.Unmarshal(b, &out)
		}
	}
	var out listed
	for page := 0; c.path != ""; page++ {
		r, err := f.do(ctx, c)
		if err != nil {
			return listed{}, err
		}
		if r.status == http.StatusNotModified && page == 0 && c.ifNoneMatch != "" {
			return listed{etag: c.ifNoneMatch, notModified: true}, nil
		}
		if r.status != http.StatusOK {
			return listed{}, f.fail(c, r.status, forge.ErrUnavailable, "unexpected answer: "+ghrest.Message(r.body), "")
		}
		got, err := items(r.body)
		if err != nil {
			return listed{}, f.fail(c, r.status, forge.ErrUnavailable, "malformed answer: "+err.Error(), "")
		}
		out.items = append(out.items, got...)
		next := ghrest.NextLink(r.header, f.endpoint)
		if page == 0 && next == "" {
			out.etag = r.header.Get("ETag")
		}
		if next != "" && !strings.HasPrefix(next, "/") {
			return listed{}, f.fail(c, r.status, forge.ErrUnavailable, "a next page outside the endpoint: "+next, "")
		}
		c.path, c.ifNoneMatch = next, ""
	}
	return out, nil
}
