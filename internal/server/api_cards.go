package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
)

// CardInput is the body of POST /api/v1/cards and PATCH /api/v1/cards/{id};
// absent (or null) fields are left alone. State is only for create.
type CardInput struct {
	Title     *string          `json:"title"`
	Body      *string          `json:"body"`
	State     *string          `json:"state"`
	Priority  *int             `json:"priority"`
	Labels    *[]string        `json:"labels"`
	Agent     *string          `json:"agent"`
	Spec      *json.RawMessage `json:"spec"`
	BlockedBy *[]string        `json:"blocked_by"`
}

func (in CardInput) op() operator.Input {
	return operator.Input{Title: in.Title, Body: in.Body, State: in.State, Priority: in.Priority, Labels: in.Labels,
		Agent: in.Agent, Spec: in.Spec, BlockedBy: in.BlockedBy}
}

// CardList is a page of cards. NextOffset is null on the last page.
type CardList struct {
	Cards      []board.Card `json:"cards"`
	Limit      int          `json:"limit"`
	Offset     int          `json:"offset"`
	NextOffset *int         `json:"next_offset"`
}

// CardDetail is a card with its runs (newest first), events and comments.
type CardDetail struct {
	board.Card
	Runs     []board.Run     `json:"runs"`
	Events   []board.Event   `json:"events"`
	Comments []board.Comment `json:"comments"`
}

const maxPage = 500

// pageParams reads limit (default def, at most 500) and offset.
func pageParams(w http.ResponseWriter, r *http.Request, def int) (limit, offset int, ok bool) {
	limit, offset = def, 0
	q := r.URL.Query()
	for name, dst := range map[string]*int{"limit": &limit, "offset": &offset} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || (name == "limit" && (n == 0 || n > maxPage)) {
				writeFieldError(w, http.StatusBadRequest, "invalid_parameter", name, name+": "+strconvQuote(v)+" is not a valid "+name+" (limit 1-500, offset >= 0)")
				return 0, 0, false
			}
			*dst = n
		}
	}
	return limit, offset, true
}

// listCards serves GET /api/v1/cards?state=a,b&label=&agent=&q=&limit=&offset=.
func (s *Server) listCards(w http.ResponseWriter, r *http.Request) {
	limit, offset, ok := pageParams(w, r, 100)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := store.CardFilter{Label: q.Get("label"), Agent: q.Get("agent"), Query: q.Get("q"), Limit: limit + 1, Offset: offset}
	b := s.board()
	for _, v := range q["state"] {
		for _, st := range strings.Split(v, ",") {
			if st = strings.TrimSpace(st); st == "" {
				continue
			}
			if _, ok := b.Column(st); !ok {
				writeFieldError(w, http.StatusBadRequest, "invalid_parameter", "state", b.StateError("state", st).Error())
				return
			}
			f.States = append(f.States, st)
		}
	}
	cards, err := s.opts.Store.ListCards(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := CardList{Cards: cards, Limit: limit, Offset: offset}
	if len(cards) > limit {
		out.Cards = cards[:limit]
		n := offset + limit
		out.NextOffset = &n
	}
	if out.Cards == nil {
		out.Cards = []board.Card{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createCard(w http.ResponseWriter, r *http.Request) {
	var in CardInput
	if !s.decode(w, r, &in, false) {
		return
	}
	c, err := s.ops().Add(r.Context(), in.op())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/cards/"+c.Identifier)
	writeJSON(w, http.StatusCreated, c)
}

func (s *Server) getCard(w http.ResponseWriter, r *http.Request) {
	d, err := s.cardDetail(r, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) cardDetail(r *http.Request, ref string) (CardDetail, error) {
	c, err := s.ops().Get(r.Context(), ref)
	if err != nil {
		return CardDetail{}, err
	}
	d := CardDetail{Card: c}
	if d.Runs, err = s.opts.Store.ListRuns(r.Context(), store.RunFilter{CardID: c.ID, Newest: true, Limit: 200}); err != nil {
		return d, err
	}
	if d.Events, err = s.opts.Store.ListEvents(r.Context(), store.EventFilter{CardID: c.ID, Newest: true, Limit: 200}); err != nil {
		return d, err
	}
	if d.Comments, err = s.opts.Store.ListComments(r.Context(), c.ID); err != nil {
		return d, err
	}
	if d.Runs == nil {
		d.Runs = []board.Run{}
	}
	if d.Comments == nil {
		d.Comments = []board.Comment{}
	}
	return d, nil
}

func (s *Server) patchCard(w http.ResponseWriter, r *http.Request) {
	var in CardInput
	if !s.decode(w, r, &in, false) {
		return
	}
	c, err := s.ops().Edit(r.Context(), r.PathValue("id"), in.op())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// ActionInput is the body of the card action endpoints; each takes only the
// fields it uses (move: state, reason; block, cancel: reason; comment,
// answer: text; resume, reopen: nothing).
type ActionInput struct {
	State  *string `json:"state,omitempty"`
	Reason *string `json:"reason,omitempty"`
	Text   *string `json:"text,omitempty"`
}

// cardAction serves POST /api/v1/cards/{id}/{action}.
func (s *Server) cardAction(action string) http.HandlerFunc {
	allowed := map[string][]string{"move": {"state", "reason"}, "block": {"reason"}, "cancel": {"reason"},
		"comment": {"text"}, "answer": {"text"}, "resume": nil, "reopen": nil}[action]
	return func(w http.ResponseWriter, r *http.Request) {
		var in ActionInput
		if !s.decode(w, r, &in, action == "resume" || action == "reopen" || action == "cancel") {
			return
		}
		for name, set := range map[string]bool{"state": in.State != nil, "reason": in.Reason != nil, "text": in.Text != nil} {
			if set && !contains(allowed, name) {
				writeFieldError(w, http.StatusBadRequest, "unknown_field", name, action+" does not take "+strconvQuote(name)+"; it takes "+listOr(allowed))
				return
			}
		}
		str := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		if action == "comment" && strings.TrimSpace(str(in.Text)) == "" {
			writeFieldError(w, http.StatusBadRequest, "invalid_input", "text", "text: is empty; write the comment")
			return
		}
		if action == "move" && in.State == nil {
			writeFieldError(w, http.StatusBadRequest, "invalid_input", "state", "state: is required; name the column to move the card to")
			return
		}
		ops, ctx, id := s.ops(), r.Context(), r.PathValue("id")
		var c board.Card
		var err error
		switch action {
		case "move":
			c, err = ops.Move(ctx, id, *in.State, str(in.Reason))
		case "block":
			c, err = ops.Block(ctx, id, str(in.Reason))
		case "cancel":
			c, err = ops.Cancel(ctx, id, str(in.Reason))
		case "resume":
			c, err = ops.Resume(ctx, id)
		case "reopen":
			c, err = ops.Reopen(ctx, id)
		case "answer":
			c, err = ops.Answer(ctx, id, str(in.Text))
		case "comment":
			cm, err := ops.Comment(ctx, id, str(in.Text))
			if err != nil {
				s.fail(w, r, err)
				return
			}
			writeJSON(w, http.StatusCreated, cm)
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.opts.Log.Info("operator action", "action", action, "card_id", c.ID, "identifier", c.Identifier, "state", c.State)
		writeJSON(w, http.StatusOK, c)
	}
}

// explainCard serves GET /api/v1/cards/{id}/explain via Options.Explain.
func (s *Server) explainCard(w http.ResponseWriter, r *http.Request) {
	if s.opts.Explain == nil {
		writeError(w, http.StatusNotImplemented, "explain_unavailable", "explain needs the dispatcher; run drover explain ID")
		return
	}
	c, err := s.ops().Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.opts.Explain(r.Context(), c.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) board() board.Board {
	if c := s.cfg(); c != nil {
		return c.Board
	}
	return defaultBoard()
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func listOr(xs []string) string {
	if len(xs) == 0 {
		return "no fields (send {} or no body)"
	}
	return strings.Join(xs, ", ")
}
