package server

import (
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/drover-dev/drover/internal/board"
)

// methods dispatches on the request method and answers 405 with the JSON
// envelope and an Allow header for the others.
type methods map[string]http.HandlerFunc

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := m[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = m[http.MethodGet]
	}
	if !ok {
		var allow []string
		for k := range m {
			allow = append(allow, k)
		}
		sort.Strings(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; use "+strings.Join(allow, " or "))
		return
	}
	h(w, r)
}

func get(h http.HandlerFunc) methods  { return methods{http.MethodGet: h} }
func post(h http.HandlerFunc) methods { return methods{http.MethodPost: h} }

func (s *Server) routes() {
	m := http.NewServeMux()
	s.mux = m
	// Symphony-compatible.
	m.Handle("/api/v1/state", get(s.getState))
	m.Handle("/api/v1/refresh", post(s.postRefresh))
	m.Handle("/api/v1/{identifier}", get(s.getIssue))
	// Cards.
	m.Handle("/api/v1/cards", methods{http.MethodGet: s.listCards, http.MethodPost: s.createCard})
	m.Handle("/api/v1/cards/{id}", methods{http.MethodGet: s.getCard, http.MethodPatch: s.patchCard})
	for _, a := range []string{"move", "comment", "block", "resume", "reopen", "cancel", "answer"} {
		m.Handle("/api/v1/cards/{id}/"+a, post(s.cardAction(a)))
	}
	m.Handle("/api/v1/cards/{id}/explain", get(s.explainCard))
	// Runs, events, agents.
	m.Handle("/api/v1/runs", get(s.listRuns))
	m.Handle("/api/v1/runs/{id}", get(s.getRun))
	m.Handle("/api/v1/runs/{id}/log", get(s.getRunLog))
	m.Handle("/api/v1/events", get(s.listEvents))
	m.Handle("/api/v1/events/stream", get(s.streamEvents))
	m.Handle("/api/v1/agents", get(s.listAgents))
	m.Handle("/api/v1/agents/{name}/resume", post(s.resumeAgent))
	m.Handle("/api/v1/openapi.json", get(s.getOpenAPI))
	m.Handle("/api/v1/webhooks/{kind}", post(s.postWebhook))
	m.Handle("/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "route_not_found", "no API route "+r.URL.Path+"; see /api/v1/openapi.json")
	}))
	// Operations.
	m.Handle("/metrics", get(promhttp.HandlerFor(s.opts.Registry, promhttp.HandlerOpts{}).ServeHTTP))
	m.Handle("/healthz", get(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	}))
	m.Handle("/readyz", get(s.readyz))
	// Dashboard.
	m.Handle("/static/", get(s.static))
	m.Handle("/{$}", get(s.pageBoard))
	m.Handle("/cards/{id}", get(s.pageCard))
	m.Handle("/columns/{name}", get(s.pageColumn))
	m.Handle("/runs/{id}", get(s.pageRun))
	m.Handle("/runs", get(s.pageRuns))
	m.Handle("/status", get(s.pageStatus))
	m.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "404 page not found — the dashboard is at /", http.StatusNotFound)
	}))
}

func defaultBoard() board.Board { return board.Default() }
