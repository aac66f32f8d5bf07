package agentchan

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/drover-dev/drover/internal/agentcall"
)

// headerRun carries the run the caller believes it is in (DROVER_RUN_ID),
// so that a caller that names another run is refused rather than served
// on its own.
const headerRun = "X-Drover-Run"

// maxBody bounds a call's body; agentcall's limits are far below it.
const maxBody = 1 << 20

// request is every call's arguments (each op reads its own).
type request struct {
	What     string   `json:"what,omitempty"`
	Where    string   `json:"where,omitempty"`
	How      string   `json:"how,omitempty"`
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`
	Summary  string   `json:"summary,omitempty"`
	Text     string   `json:"text,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// reply is a call's error (a result is the value itself).
type reply struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// ops are the calls, by path.
var ops = map[string]func(ctx context.Context, svc agentcall.Caller, in request) (any, error){
	"/v1/card": func(ctx context.Context, svc agentcall.Caller, _ request) (any, error) { return svc.ReadCard(ctx) },
	"/v1/block": func(ctx context.Context, svc agentcall.Caller, in request) (any, error) {
		return svc.Block(ctx, in.What, in.Where, in.How)
	},
	"/v1/ask": func(ctx context.Context, svc agentcall.Caller, in request) (any, error) {
		return svc.Ask(ctx, in.Question, in.Options)
	},
	"/v1/done": func(ctx context.Context, svc agentcall.Caller, in request) (any, error) {
		return svc.Done(ctx, in.Summary)
	},
	"/v1/comment": func(ctx context.Context, svc agentcall.Caller, in request) (any, error) {
		return svc.Comment(ctx, in.Text)
	},
	"/v1/progress": func(ctx context.Context, svc agentcall.Caller, in request) (any, error) {
		return svc.Progress(ctx, in.Note)
	},
}

func (r *Run) handler(svc agentcall.Caller) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if status, msg := r.authorized(req); status != 0 {
			writeJSON(w, status, reply{Error: msg})
			return
		}
		op, ok := ops[req.URL.Path]
		if !ok || req.Method != http.MethodPost {
			writeJSON(w, http.StatusNotFound, reply{Error: "no such call: " + req.Method + " " + req.URL.Path})
			return
		}
		var in request
		if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxBody)).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, reply{Error: "the call's body is not JSON: " + err.Error(), Field: "body"})
			return
		}
		v, err := op(req.Context(), svc, in)
		if err != nil {
			status, rep := errorStatus(err)
			writeJSON(w, status, rep)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
