// Package ghrest holds what drover's two GitHub clients (the tracker,
// tracker/github, and the forge, forge/github) share about GitHub's REST
// API: the endpoint and version, the request headers, how a rate limit is
// told apart, the message of an error body and Link-header pagination. It
// is pure: it sends nothing and knows no drover error types (each client
// maps a Limit to its own).
package ghrest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is GitHub's REST API.
const DefaultEndpoint = "https://api.github.com"

// APIVersion is the REST API version drover speaks.
const APIVersion = "2022-11-28"

// SecondaryWait is how long to wait after a secondary rate limit that
// names no Retry-After: GitHub's documentation says at least one minute.
const SecondaryWait = time.Minute

// SetHeaders sets the headers every request to GitHub carries: the media
// type, the API version, drover's user agent and the token (when there is
// one).
func SetHeaders(h http.Header, token string) {
	h.Set("Accept", "application/vnd.github+json")
	h.Set("X-GitHub-Api-Version", APIVersion)
	h.Set("User-Agent", "drover")
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
}

// Limit is a rate limit GitHub answered with: wait until Until.
type Limit struct {
	Until     time.Time
	Secondary bool
	Msg       string
}

// RateLimit tells GitHub's limits apart by structure first: a 403 or 429
// with x-ratelimit-remaining: 0 is the primary limit (wait for
// x-ratelimit-reset); one with retry-after is a secondary limit (wait that
// long). A 403 or 429 that has neither but whose documented message names
// a secondary rate limit (or any 429) waits a minute, as GitHub's
// documentation asks. Any other answer is no limit (ok false).
// Evidence: docs.github.com, "Rate limits for the REST API" (headers and
// waits) and "Best practices for using the REST API".
func RateLimit(status int, h http.Header, body []byte, now time.Time) (Limit, bool) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return Limit{}, false
	}
	msg := Message(body)
	if ra := h.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && s >= 0 {
			return Limit{Until: now.Add(time.Duration(s) * time.Second), Secondary: true, Msg: msg}, true
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		until := now.Add(SecondaryWait)
		if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			until = time.Unix(s, 0)
		}
		return Limit{Until: until, Msg: msg}, true
	}
	if status == http.StatusTooManyRequests || strings.Contains(strings.ToLower(msg), "secondary rate limit") {
		return Limit{Until: now.Add(SecondaryWait), Secondary: true, Msg: msg}, true
	}
	return Limit{}, false
}

// Message is the "message" of GitHub's error body, else the body's start.
func Message(b []byte) string {
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

// NextLink is the rel="next" URL of a Link header, as a path below
// endpoint ("" when there is no next page).
func NextLink(h http.Header, endpoint string) string {
	for _, part := range strings.Split(h.Get("Link"), ",") {
		seg := strings.Split(part, ";")
		if len(seg) < 2 {
			continue
		}
		target := strings.Trim(strings.TrimSpace(seg[0]), "<>")
		for _, p := range seg[1:] {
			if strings.TrimSpace(p) == `rel="next"` {
				return strings.TrimPrefix(target, endpoint)
			}
		}
	}
	return ""
}
