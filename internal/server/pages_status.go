package server

import (
	"net/http"

	"github.com/drover-dev/drover/internal/status"
)

// pageStatus is `drover status` for people: the same snapshot as
// GET /api/v1/state, drawn as sections (the JSON stays at the API).
func (s *Server) pageStatus(w http.ResponseWriter, r *http.Request) {
	st, err := status.Snapshot(r.Context(), s.opts.Store, s.cfg(), s.opts.Now())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, "status", page{Title: "status", State: st})
}
