package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// EventList is a page of events, oldest first; NextSince is the cursor to
// pass as since for the next page (the last seq, or the given since).
type EventList struct {
	Events    []board.Event `json:"events"`
	NextSince int64         `json:"next_since"`
}

// eventFilter reads since (a seq cursor) and card from the query.
func (s *Server) eventFilter(w http.ResponseWriter, r *http.Request) (store.EventFilter, bool) {
	var f store.EventFilter
	q := r.URL.Query()
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeFieldError(w, http.StatusBadRequest, "invalid_parameter", "since", "since: "+strconvQuote(v)+" is not an event seq (a number >= 0)")
			return f, false
		}
		f.SinceSeq = n
	}
	if ref := q.Get("card"); ref != "" {
		c, err := s.ops().Get(r.Context(), ref)
		if err != nil {
			s.fail(w, r, err)
			return f, false
		}
		f.CardID = c.ID
	}
	return f, true
}

// listEvents serves GET /api/v1/events?since=&card=&limit=.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	f, ok := s.eventFilter(w, r)
	if !ok {
		return
	}
	limit, _, ok := pageParams(w, r, 100)
	if !ok {
		return
	}
	f.Limit = limit
	evs, err := s.opts.Store.ListEvents(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := EventList{Events: evs, NextSince: f.SinceSeq}
	if out.Events == nil {
		out.Events = []board.Event{}
	}
	if n := len(evs); n > 0 {
		out.NextSince = evs[n-1].Seq
	}
	writeJSON(w, http.StatusOK, out)
}

// streamEvents serves GET /api/v1/events/stream as server-sent events.
//
// Each event is sent as `id: SEQ` plus `data: <event JSON>` (the default
// "message" type). The stream starts after ?since= or the Last-Event-ID
// header, else at the newest event (only new ones are sent). Whenever the
// store signals a change that appended no event (run progress, agent state),
// an `event: change` with data {} tells dashboards to refresh, at most once
// a second. A `: ping` comment goes out every heartbeat interval.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) {
	f, ok := s.eventFilter(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	if id := r.Header.Get("Last-Event-ID"); id != "" && r.URL.Query().Get("since") == "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n >= 0 {
			f.SinceSeq = n
		}
	} else if r.URL.Query().Get("since") == "" {
		last, err := s.opts.Store.ListEvents(ctx, store.EventFilter{CardID: f.CardID, Newest: true, Limit: 1})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if len(last) > 0 {
			f.SinceSeq = last[0].Seq
		}
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming_unsupported", "this connection cannot stream")
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n: connected\n\n")
	fl.Flush()

	changes := s.opts.Store.Watch(ctx)
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	poll := time.NewTicker(5 * time.Second) // safety net if a change signal is missed
	defer poll.Stop()
	var lastChange time.Time
	for first := true; ; first = false {
		changed := false
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-beat.C:
				rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
				if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
					return
				}
				fl.Flush()
				continue
			case _, ok := <-changes:
				if !ok {
					return
				}
				changed = true
			case <-poll.C:
			}
		}
		sent := 0
		for {
			f.Limit = 500
			evs, err := s.opts.Store.ListEvents(ctx, f)
			if err != nil {
				s.opts.Log.Warn("event stream: list events", "err", err)
				break
			}
			rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			for _, e := range evs {
				b, _ := json.Marshal(e)
				if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.Seq, b); err != nil {
					return
				}
				f.SinceSeq = e.Seq
				sent++
			}
			if len(evs) < f.Limit {
				break
			}
		}
		if sent == 0 && changed && time.Since(lastChange) >= time.Second {
			if _, err := fmt.Fprint(w, "event: change\ndata: {}\n\n"); err != nil {
				return
			}
			lastChange = time.Now()
		}
		fl.Flush()
	}
}
