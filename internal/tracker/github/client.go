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
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/tracker"
)

// DefaultEndpoint is GitHub's REST API.
const DefaultEndpoint = "https://api.github.com"

// APIVersion is the REST API version drover speaks.
const APIVersion = "2022-11-28"

// secondaryWait is how long to wait after a secondary rate limit that names
// no Retry-After: GitHub's documentation says at least one minute.
const secondaryWait = time.Minute

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
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", APIVersion)
	req.Header.Set("User-Agent", "drover")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
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

// rateLimit tells GitHub's limits apart by structure first: a 403 or 429
// with x-ratelimit-remaining: 0 is the primary limit (wait for
// x-ratelimit-reset); one with retry-after is a secondary limit (wait that
// long). A 403 or 429 that has neither but whose documented message names a
// secondary rate limit waits a minute, as GitHub's documentation asks.
// Evidence: docs.github.com, "Rate limits for the REST API" (headers and
// waits) and "Best practices for using the REST API".
func (c *client) rateLimit(r response) *tracker.RateLimitError {
	if r.status != http.StatusForbidden && r.status != http.StatusTooManyRequests {
		return nil
	}
	now := c.now()
	msg := message(r.body)
	if ra := r.header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && s >= 0 {
			return &tracker.RateLimitError{Until: now.Add(time.Duration(s) * time.Second), Secondary: true, Msg: msg}
		}
	}
	if r.header.Get("X-RateLimit-Remaining") == "0" {
		until := now.Add(secondaryWait)
		if s, err := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			until = time.Unix(s, 0)
		}
		return &tracker.RateLimitError{Until: until, Msg: msg}
	}
	if r.status == http.StatusTooManyRequests || strings.Contains(strings.ToLower(msg), "secondary rate limit") {
		return &tracker.RateLimitError{Until: now.Add(secondaryWait), Secondary: true, Msg: msg}
	}
	return nil
}

// message is the "message" of GitHub's error body, else the body's start.
func message(b []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil && e.Message != "" {
		return e.Message
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

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
func (c *client) nextLink(h http.Header) string {
	for _, part := range strings.Split(h.Get("Link"), ",") {
		seg := strings.Split(part, ";")
		if len(seg) < 2 {
			continue
		}
		target := strings.Trim(strings.TrimSpace(seg[0]), "<>")
		for _, p := range seg[1:] {
			if strings.TrimSpace(p) == `rel="next"` {
				return strings.TrimPrefix(target, c.endpoint)
			}
		}
	}
	return ""
}

func esc(s string) string { return url.PathEscape(s) }
