package testkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Request is one request a Receiver answered.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Status int // the status the receiver answered with
	At     time.Time
}

// Delivered reports whether the receiver accepted the request (a 2xx answer).
func (r Request) Delivered() bool { return r.Status >= 200 && r.Status < 300 }

// Receiver is a local HTTP endpoint on 127.0.0.1 standing in for Slack and
// webhook receivers. It records every request and answers 200 unless told
// otherwise (FailNext, SetStatus); the body of an answer is its status text.
// It is safe for concurrent use.
type Receiver struct {
	// URL is the receiver's base address, e.g. http://127.0.0.1:40123.
	URL string

	mu     sync.Mutex
	got    []Request
	queued []int // the answers to the next requests, in order
	status int   // the answer once queued is spent
}

// NewReceiver starts a receiver, closed when t ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{status: http.StatusOK}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	code := r.status
	if len(r.queued) > 0 {
		code, r.queued = r.queued[0], r.queued[1:]
	}
	r.got = append(r.got, Request{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body, Status: code, At: time.Now()})
	r.mu.Unlock()
	w.WriteHeader(code)
	_, _ = io.WriteString(w, http.StatusText(code))
}

// FailNext answers the next n requests with status (after any failures
// already queued), then goes back to the standing answer.
func (r *Receiver) FailNext(n, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range n {
		r.queued = append(r.queued, status)
	}
}

// SetStatus sets the standing answer (200 at first) given once the queued
// failures are spent.
func (r *Receiver) SetStatus(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

// Requests returns every request so far, answered or refused, in arrival
// order; path "" means every path, otherwise only requests to path.
func (r *Receiver) Requests(path string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.got {
		if path == "" || q.Path == path {
			out = append(out, q)
		}
	}
	return out
}

// Delivered is Requests(path) without the refused ones.
func (r *Receiver) Delivered(path string) []Request {
	var out []Request
	for _, q := range r.Requests(path) {
		if q.Delivered() {
			out = append(out, q)
		}
	}
	return out
}

// WaitFor waits until at least n requests were delivered to path ("" = any)
// and returns them, failing t if that does not happen within d.
func (r *Receiver) WaitFor(t testing.TB, path string, n int, d time.Duration) []Request {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := r.Delivered(path)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("testkit: receiver got %d deliveries to %q within %v, want %d", len(got), path, d, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
