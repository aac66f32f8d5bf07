package server

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/status"
)

// getState serves GET /api/v1/state: the status snapshot.
func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	st, err := status.Snapshot(r.Context(), s.opts.Store, s.cfg(), s.opts.Now())
	if err != nil {
		s.opts.Log.Error("state snapshot failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"generated_at": s.opts.Now().UTC(),
			"error": ErrorDetail{Code: "snapshot_unavailable", Message: err.Error()}})
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// getIssue serves Symphony's GET /api/v1/{identifier}.
func (s *Server) getIssue(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("identifier")
	is, err := status.IssueDetail(r.Context(), s.opts.Store, s.cfg(), ref, s.opts.Now())
	if errors.Is(err, status.ErrNotFound) {
		writeError(w, http.StatusNotFound, "issue_not_found", "no card has the id, identifier or tracker key "+strconvQuote(ref)+"; GET /api/v1/cards lists the cards")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, is)
}

// RefreshResponse is Symphony's 202 body for POST /api/v1/refresh.
type RefreshResponse struct {
	Queued      bool      `json:"queued"`
	Coalesced   bool      `json:"coalesced"`
	RequestedAt time.Time `json:"requested_at"`
	Operations  []string  `json:"operations"`
}

// postRefresh wakes the dispatcher, coalescing requests while one is in flight.
func (s *Server) postRefresh(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if !s.decode(w, r, &body, true) {
		return
	}
	if s.opts.Refresh == nil {
		writeError(w, http.StatusServiceUnavailable, "dispatcher_unavailable", "no dispatcher runs in this process; drover serve starts one")
		return
	}
	coalesced := !s.refreshing.CompareAndSwap(false, true)
	if !coalesced {
		go func() {
			defer s.refreshing.Store(false)
			s.opts.Refresh()
		}()
	}
	writeJSON(w, http.StatusAccepted, RefreshResponse{Queued: true, Coalesced: coalesced, RequestedAt: s.opts.Now().UTC(), Operations: []string{"poll", "reconcile"}})
}

// readyz answers 200 when the store answers a ping within 2s.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Store.Ping(ctx); err != nil {
		writeError(w, http.StatusServiceUnavailable, "store_unavailable", "store ping failed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "store": s.opts.Store.Backend()})
}

//go:embed openapi.yaml
var openapiYAML []byte

var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, err
	}
	// Every operation may answer with the error envelope (401, 403, 405,
	// 413, 500, …): give each a default response of it.
	if m, ok := doc.(map[string]any); ok {
		paths, _ := m["paths"].(map[string]any)
		for _, item := range paths {
			ops, _ := item.(map[string]any)
			for method, op := range ops {
				o, ok := op.(map[string]any)
				if !ok || method == "parameters" {
					continue
				}
				if rs, ok := o["responses"].(map[string]any); ok {
					if _, has := rs["default"]; !has {
						rs = maps.Clone(rs)
						rs["default"] = map[string]any{"$ref": "#/components/responses/Error"}
						o["responses"] = rs
					}
				}
			}
		}
	}
	return json.MarshalIndent(doc, "", "  ")
})

// OpenAPI returns the API's OpenAPI 3 document as JSON.
func OpenAPI() ([]byte, error) { return openapiJSON() }

func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	b, err := OpenAPI()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(b)
}
