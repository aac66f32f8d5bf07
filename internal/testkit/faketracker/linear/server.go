// Package linear is a local stand-in for Linear's GraphQL API: the
// operations drover sends (projects, issues with filter and cursor
// pagination, issue(id).comments, issueUpdate, commentCreate), answered in
// the shapes of Linear's published schema (linear/linear,
// packages/sdk/src/schema.graphql), with faults a test can inject: 5xx,
// RATELIMITED errors, malformed bodies and a refused transition. Requests
// are dispatched by operationName (drover names every document) and logged.
package linear

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/testkit/faketracker"
)

// Request is one logged request: the operation, its variables and the
// Authorization header it came with.
type Request struct {
	Op     string
	Vars   map[string]any
	Status int
	Auth   string
}

func (r Request) String() string { return fmt.Sprintf("%s → %d", r.Op, r.Status) }

// State is a workflow state.
type State struct{ ID, Name, Type string }

// Issue is one issue of the fake project.
type Issue struct {
	ID, Identifier, Title, Description string
	State                              string // a state name
	Labels                             []string
	Priority                           int
	BlockedBy                          []string // ids of issues that block this one
	UpdatedAt                          time.Time
}

// Comment is one comment.
type Comment struct {
	ID, Issue, User, Body string
	CreatedAt             time.Time
}

// Fault answers the next Times requests whose operation name it matches
// (Match nil: any).
type Fault = faketracker.Fault[string]

// Server is the fake Linear.
type Server struct {
	faketracker.Base[string, Request]
	Slug   string
	Team   string
	APIKey string // when set, Authorization must equal it

	states   []State
	issues   []*Issue
	comments []Comment
	n        int
}

// New starts a fake with one project (slug) of one team with Linear's
// default workflow states plus Symphony's.
func New(slug string) *Server {
	s := &Server{Slug: slug, Team: "team-1"}
	for i, st := range []struct{ n, t string }{{"Backlog", "backlog"}, {"Todo", "unstarted"}, {"In Progress", "started"},
		{"In Review", "started"}, {"Human Review", "started"}, {"Rework", "started"}, {"Merging", "started"},
		{"Done", "completed"}, {"Canceled", "canceled"}, {"Duplicate", "canceled"}} {
		s.states = append(s.states, State{ID: fmt.Sprintf("state-%d", i+1), Name: st.n, Type: st.t})
	}
	s.Start(s.serve, func(r *http.Request, body []byte, status int) Request {
		req, _ := parse(body)
		return Request{Op: req.OperationName, Vars: req.Variables, Status: status, Auth: r.Header.Get("Authorization")}
	})
	return s
}

// AddIssue adds an issue in state and returns its id.
func (s *Server) AddIssue(title, description, state string, labels ...string) string {
	s.Lock()
	defer s.Unlock()
	s.n++
	is := &Issue{ID: fmt.Sprintf("issue-%04d", s.n), Identifier: fmt.Sprintf("ENG-%d", s.n), Title: title, Description: description,
		State: state, Labels: labels, UpdatedAt: time.Now().UTC()}
	s.issues = append(s.issues, is)
	return is.ID
}

// Block records that blocker blocks id (a "blocks" relation).
func (s *Server) Block(id, blocker string) {
	s.Lock()
	defer s.Unlock()
	if is := s.find(id); is != nil {
		is.BlockedBy = append(is.BlockedBy, blocker)
	}
}

// SetState moves an issue as a person would.
func (s *Server) SetState(id, state string) {
	s.Lock()
	defer s.Unlock()
	if is := s.find(id); is != nil {
		is.State, is.UpdatedAt = state, time.Now().UTC()
	}
}

// Edit changes an issue's title and description as a person would.
func (s *Server) Edit(id, title, description string) {
	s.Lock()
	defer s.Unlock()
	if is := s.find(id); is != nil {
		is.Title, is.Description, is.UpdatedAt = title, description, time.Now().UTC()
	}
}

// PersonComments adds a person's comment.
func (s *Server) PersonComments(id, user, body string) {
	s.Lock()
	defer s.Unlock()
	s.addComment(id, user, body)
}

func (s *Server) addComment(id, user, body string) {
	now := time.Now().UTC()
	s.comments = append(s.comments, Comment{ID: fmt.Sprintf("comment-%d", len(s.comments)+1), Issue: id, User: user, Body: body, CreatedAt: now})
	if is := s.find(id); is != nil {
		is.UpdatedAt = now
	}
}

// Issue returns a copy of an issue.
func (s *Server) Issue(id string) Issue {
	s.Lock()
	defer s.Unlock()
	if is := s.find(id); is != nil {
		return *is
	}
	return Issue{}
}

// Comments returns an issue's comments.
func (s *Server) Comments(id string) []Comment {
	s.Lock()
	defer s.Unlock()
	return slices.DeleteFunc(slices.Clone(s.comments), func(c Comment) bool { return c.Issue != id })
}

// RateLimit answers the next n requests with Linear's RATELIMITED error.
func (s *Server) RateLimit(n int, reset time.Time) {
	s.Inject(Fault{Status: http.StatusBadRequest, Times: n, Header: http.Header{"X-Ratelimit-Requests-Reset": {strconv.FormatInt(reset.UnixMilli(), 10)}},
		Body: `{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED"}}]}`})
}

func (s *Server) find(id string) *Issue {
	for _, is := range s.issues {
		if is.ID == id || is.Identifier == id {
			return is
		}
	}
	return nil
}

// request is a GraphQL request's body.
type request struct {
	OperationName string         `json:"operationName"`
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
}

// parse reads a request's body; a document of one named operation needs
// no operationName (an agent's linear_graphql query): it is taken from the
// query.
func parse(body []byte) (request, error) {
	var req request
	err := json.Unmarshal(body, &req)
	if req.OperationName == "" {
		req.OperationName = operationOf(req.Query)
	}
	return req, err
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	req, err := parse(body)
	if err != nil || r.Method != http.MethodPost || req.Query == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []any{map[string]any{"message": "POST body must be a GraphQL request", "extensions": map[string]any{"code": "GRAPHQL_PARSE_FAILED"}}}})
		return
	}
	if s.Faulted(w, req.OperationName) {
		return
	}
	for _, id := range append(strs(req.Variables["ids"]), fmt.Sprint(req.Variables["id"]), fmt.Sprint(req.Variables["issueId"])) {
		if s.Fails(id) {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"errors": []any{map[string]any{"message": "Internal server error", "extensions": map[string]any{"code": "INTERNAL_SERVER_ERROR"}}}})
			return
		}
	}
	if s.APIKey != "" && r.Header.Get("Authorization") != s.APIKey {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"errors": []any{map[string]any{"message": "Authentication required", "extensions": map[string]any{"code": "AUTHENTICATION_ERROR"}}}})
		return
	}
	data, gerr := s.operation(req.OperationName, req.Variables)
	if gerr != "" {
		writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": []any{map[string]any{"message": gerr, "extensions": map[string]any{"code": "INVALID_INPUT"}}}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

func (s *Server) operation(op string, v map[string]any) (any, string) {
	switch op {
	case "DroverProject":
		if v["slug"] != s.Slug {
			return map[string]any{"projects": map[string]any{"nodes": []any{}}}, ""
		}
		var states []any
		for _, st := range s.states {
			states = append(states, map[string]any{"id": st.ID, "name": st.Name, "type": st.Type})
		}
		team := map[string]any{"id": s.Team, "key": "ENG", "states": map[string]any{"nodes": states}}
		return map[string]any{"projects": map[string]any{"nodes": []any{map[string]any{"id": "project-1", "name": "Project",
			"teams": map[string]any{"nodes": []any{team}}}}}}, ""
	case "DroverCandidates":
		if v["slug"] != s.Slug {
			return map[string]any{"issues": map[string]any{"nodes": []any{}, "pageInfo": map[string]any{"hasNextPage": false, "endCursor": nil}}}, ""
		}
		want := strs(v["states"])
		var sel []*Issue
		for _, is := range s.issues {
			if slices.Contains(want, is.State) {
				sel = append(sel, is)
			}
		}
		sort.Slice(sel, func(i, j int) bool { return sel[i].ID < sel[j].ID })
		first := 50
		if f, ok := v["first"].(float64); ok && f > 0 {
			first = min(int(f), 250)
		}
		start := 0
		if a, ok := v["after"].(string); ok && a != "" {
			n, err := strconv.Atoi(a)
			if err != nil {
				return nil, "after: not a cursor this server gave"
			}
			start = n
		}
		end := min(start+first, len(sel))
		start = min(start, end)
		nodes := []any{}
		for _, is := range sel[start:end] {
			nodes = append(nodes, s.wire(is))
		}
		var cursor any
		if end > start {
			cursor = strconv.Itoa(end)
		}
		return map[string]any{"issues": map[string]any{"nodes": nodes, "pageInfo": map[string]any{"hasNextPage": end < len(sel), "endCursor": cursor}}}, ""
	case "DroverIssuesByID":
		nodes := []any{}
		for _, id := range strs(v["ids"]) {
			if is := s.find(id); is != nil {
				nodes = append(nodes, s.wire(is))
			}
		}
		return map[string]any{"issues": map[string]any{"nodes": nodes}}, ""
	case "DroverComments":
		is := s.find(fmt.Sprint(v["id"]))
		if is == nil {
			return nil, "Entity not found: Issue"
		}
		since, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(v["since"]))
		nodes := []any{}
		for _, c := range s.comments {
			if c.Issue == is.ID && c.CreatedAt.After(since) {
				nodes = append(nodes, map[string]any{"id": c.ID, "body": c.Body, "createdAt": c.CreatedAt.Format(time.RFC3339Nano), "user": map[string]any{"name": c.User}})
			}
		}
		return map[string]any{"issue": map[string]any{"comments": map[string]any{"nodes": nodes}}}, ""
	case "DroverMove":
		is := s.find(fmt.Sprint(v["id"]))
		if is == nil {
			return nil, "Entity not found: Issue"
		}
		var st *State
		for i := range s.states {
			if s.states[i].ID == v["stateId"] {
				st = &s.states[i]
			}
		}
		if st == nil {
			return nil, "Entity not found: WorkflowState"
		}
		if s.Refuses(st.Name) {
			return map[string]any{"issueUpdate": map[string]any{"success": false}}, ""
		}
		is.State, is.UpdatedAt = st.Name, time.Now().UTC()
		return map[string]any{"issueUpdate": map[string]any{"success": true}}, ""
	case "DroverComment":
		id := fmt.Sprint(v["issueId"])
		if s.find(id) == nil {
			return nil, "Entity not found: Issue"
		}
		s.addComment(id, "drover", fmt.Sprint(v["body"]))
		return map[string]any{"commentCreate": map[string]any{"success": true}}, ""
	case "Viewer": // an agent's own query (linear_graphql)
		return map[string]any{"viewer": map[string]any{"id": "user-drover", "name": "drover"}}, ""
	}
	return nil, "Unknown operation " + op
}

// operationOf is the name of the query's first operation ("query Name" or
// "mutation Name"), or "".
func operationOf(q string) string {
	f := strings.FieldsFunc(q, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == '{' })
	if len(f) >= 2 && (f[0] == "query" || f[0] == "mutation") {
		return f[1]
	}
	return ""
}

func (s *Server) wire(is *Issue) map[string]any {
	var st State
	for _, x := range s.states {
		if x.Name == is.State {
			st = x
		}
	}
	labels := []any{}
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	rels := []any{}
	for _, b := range is.BlockedBy {
		rels = append(rels, map[string]any{"type": "blocks", "issue": map[string]any{"id": b}})
	}
	var desc any
	if is.Description != "" {
		desc = is.Description
	}
	var priority any = is.Priority
	if s.Corrupted(is.ID) {
		priority = "high" // not a number
	}
	return map[string]any{"id": is.ID, "identifier": is.Identifier, "title": is.Title, "description": desc, "priority": priority,
		"url": "https://linear.app/acme/issue/" + is.Identifier, "updatedAt": is.UpdatedAt.Format(time.RFC3339Nano),
		"state": map[string]any{"id": st.ID, "name": st.Name, "type": st.Type}, "team": map[string]any{"id": s.Team},
		"labels": map[string]any{"nodes": labels}, "inverseRelations": map[string]any{"nodes": rels}}
}

func strs(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

var writeJSON = faketracker.WriteJSON
