package server

import (
	"net/http"

	"github.com/drover-dev/drover/internal/status"
)

// AgentList is the agent profiles with their breakers and today's spend.
type AgentList struct {
	Agents []status.Agent `json:"agents"`
	Spend  status.Spend   `json:"spend"`
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	st, err := status.Snapshot(r.Context(), s.opts.Store, s.cfg(), s.opts.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, AgentList{Agents: st.Agents, Spend: st.Spend})
}

// resumeAgent serves POST /api/v1/agents/{name}/resume: close the breaker.
func (s *Server) resumeAgent(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if !s.decode(w, r, &body, true) {
		return
	}
	name := r.PathValue("name")
	as, err := s.ops().ResumeAgent(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.opts.Log.Info("operator resumed agent profile", "agent", name)
	writeJSON(w, http.StatusOK, as)
}
