// Package github is drover's tracker for GitHub Issues (REST API v3,
// application/vnd.github+json, version 2022-11-28).
//
// Requests: issue listings are conditional (If-None-Match with the last
// ETag), so idle polling costs one 304 per interval, which GitHub does not
// count against the rate limit. After a full listing at start, polling asks
// only for issues updated since the newest one seen (state=all, so a closed
// issue shows up as closed), applied to the cached candidates.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/drover-dev/drover/internal/ghrest"
	"github.com/drover-dev/drover/internal/tracker"
)

// DefaultEndpoint is GitHub's REST API.
const DefaultEndpoint = ghrest.DefaultEndpoint

// APIVersion is the REST API version drover speaks.
const APIVersion = ghrest.APIVersion

type client struct {
	http     *http.Client
	endpoint string
	token    string
	now      func() time.Time
}

// response is a finished request: status, headers, body.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request. It returns a *tracker.RateLimitError for GitHub's
// primary and secondary limits, tracker.ErrUnavailable (wrapped) for a
// network failure or a 5xx, and otherwise the response as it came.
func (c *client) do(ctx context.Context, method, path string, in any, hdr http.Header) (response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return response{}, err
		}
		body = bytes.NewReader(b)
	}
	u := c.endpoint + path
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return response{}, err
	}
	ghrest.SetHeaders(req.Header, c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return response{}, ctx.Err()
		}
		return response{}, fmt.Errorf("%w: %s %s: %v", tracker.ErrUnavailable, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return response{}, fmt.Errorf("%w: %s %s: reading the answer: %v", tracker.ErrUnavailable, method, path, err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: b}
	if rl := c.rateLimit(r); rl != nil {
		return r, rl
	}
	if r.status >= 500 {
		return r, fmt.Errorf("%w: %s %s: %d %s", tracker.ErrUnavailable, method, path, r.status, message(b))
	}
	return r, nil
}

// rateLimit is GitHub's primary or secondary limit (ghrest.RateLimit says
// which) as the tracker's error, nil when the answer is no limit.
func (c *client) rateLimit(r response) *tracker.RateLimitError {
	l, ok := ghrest.RateLimit(r.status, r.header, r.body, c.now())
	if !ok {
		return nil
	}
	return &tracker.RateLimitError{Until: l.Until, Secondary: l.Secondary, Msg: l.Msg}
}

// message is the "message" of GitHub's error body, else the body's start.
func message(b []byte) string { return ghrest.Message(b) }

// refusedOrFailed turns a non-2xx answer to a write into an error: 401 is
// the token (fix it; retried), 403/404/410/422 the tracker refusing this
// write (not retried), anything else unexpected (retried).
func refusedOrFailed(method, path string, r response) error {
	switch r.status {
	case http.StatusUnauthorized:
		return fmt.Errorf("%w: %s %s: 401 %s (check tracker.api_key)", tracker.ErrUnavailable, method, path, message(r.body))
	case http.StatusForbidden, http.StatusNotFound, http.StatusGone, http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %s %s: %d %s", tracker.ErrRefused, method, path, r.status, message(r.body))
	}
	return fmt.Errorf("%w: %s %s: unexpected %d %s", tracker.ErrUnavailable, method, path, r.status, message(r.body))
}

// decode reads a JSON answer; a body that is not what GitHub documents is
// an outage of the tracker, not an empty result.
func decode(method, path string, r response, v any) error {
	if err := json.Unmarshal(r.body, v); err != nil {
		return fmt.Errorf("%w: %s %s: malformed answer: %v", tracker.ErrUnavailable, method, path, err)
	}
	return nil
}

// nextLink is the rel="next" URL of a Link header, as a path below endpoint.
func (c *client) nextLink(h http.Header) string { return ghrest.NextLink(h, c.endpoint) }

func esc(s string) string { return url.PathEscape(s) }
