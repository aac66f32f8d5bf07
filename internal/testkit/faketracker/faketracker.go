// Package faketracker is the server skeleton the fake trackers (github,
// linear) share: an httptest server whose handler runs under the fake's
// lock with the request's body read, a log of every request with the
// status it was answered with, and faults a test queues for the requests
// they match. Each fake adds its API's routes, state and log entry.
package faketracker

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
)

// Fault is an answer injected for the next Times requests it matches (Times
// ≤ 0: every one until Up). K is what a fake matches on: GitHub's method
// and path, Linear's operation name.
type Fault[K any] struct {
	Match  func(K) bool // nil: every request
	Status int
	Header http.Header
	Body   string
	Times  int
}

// Base is the skeleton a fake embeds. Its Mutex guards the fake's state as
// well: it is held while a request is served, and the fake's own methods
// (adding issues, reading them) take it too. R is one logged request.
type Base[K, R any] struct {
	*httptest.Server
	sync.Mutex
	faults  []*Fault[K]
	log     []R
	refused map[string]bool
	failing map[string]bool
	corrupt map[string]bool
}

// Start starts the server. Each request is read whole, then answered by
// serve under the lock; entry makes its log entry from the request, its
// body and the status serve answered with.
func (b *Base[K, R]) Start(serve func(w http.ResponseWriter, r *http.Request, body []byte), entry func(r *http.Request, body []byte, status int) R) {
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.Lock()
		defer b.Unlock()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		serve(rec, r, body)
		b.log = append(b.log, entry(r, body, rec.status))
	}))
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

// Faulted answers the request with the first queued fault that matches k
// and reports whether one did. The caller holds the lock (serve does).
func (b *Base[K, R]) Faulted(w http.ResponseWriter, k K) bool {
	for i, f := range b.faults {
		if f.Match != nil && !f.Match(k) {
			continue
		}
		if f.Times > 0 {
			if f.Times--; f.Times == 0 {
				b.faults = append(b.faults[:i:i], b.faults[i+1:]...)
			}
		}
		for name, v := range f.Header {
			w.Header()[name] = v
		}
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, f.Body)
		return true
	}
	return false
}

// Inject queues a fault.
func (b *Base[K, R]) Inject(f Fault[K]) {
	b.Lock()
	b.faults = append(b.faults, &f)
	b.Unlock()
}

// Up clears every fault, FailFor's too.
func (b *Base[K, R]) Up() {
	b.Lock()
	b.faults = nil
	b.failing = nil
	b.corrupt = nil
	b.Unlock()
}

// Corrupt makes the fake send issue id, wherever it answers with it, with
// a field of the wrong type (data drover cannot read), until Up.
func (b *Base[K, R]) Corrupt(id string) { b.mark(&b.corrupt, id) }

// Corrupted reports whether issue id is sent corrupt. The caller holds the
// lock.
func (b *Base[K, R]) Corrupted(id string) bool { return b.corrupt[id] }

// FailFor makes the fake fail (a 5xx) every request about issue id, alone
// or in a batch, until Up: the tracker failing for one issue only.
func (b *Base[K, R]) FailFor(id string) { b.mark(&b.failing, id) }

// Fails reports whether requests about issue id fail. The caller holds the
// lock.
func (b *Base[K, R]) Fails(id string) bool { return b.failing[id] }

// Refuse makes the fake refuse the write that shows name (GitHub: adding
// the label answers 422; Linear: issueUpdate to the state answers
// success: false), as a tracker refuses a transition.
func (b *Base[K, R]) Refuse(name string) { b.mark(&b.refused, name) }

// mark adds key to the set under the lock.
func (b *Base[K, R]) mark(set *map[string]bool, key string) {
	b.Lock()
	defer b.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[key] = true
}

// Refuses reports whether the write that shows name is refused. The
// caller holds the lock.
func (b *Base[K, R]) Refuses(name string) bool { return b.refused[name] }

// Log returns the requests so far, in order.
func (b *Base[K, R]) Log() []R {
	b.Lock()
	defer b.Unlock()
	return slices.Clone(b.log)
}

// ResetLog forgets the requests so far.
func (b *Base[K, R]) ResetLog() {
	b.Lock()
	b.log = nil
	b.Unlock()
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
