// Package fakeprovider is a model provider for tests: an HTTP server on
// 127.0.0.1 that speaks the documented streaming shapes of the Anthropic
// Messages API (anthropic.go), the OpenAI Responses API (openai.go) and the
// Gemini API (gemini.go) and the OpenAI Chat Completions API (chat.go) and
// answers each request with a scripted Step. Another API is another file
// with a route and a writer for each Step; the script and the request log
// are shared.
//
// A script is chosen by a marker, any string the request body contains (put
// it in the card's title so it reaches the prompt): the requests carrying a
// marker take its steps in order, the last one repeating. Requests with no
// known marker (a CLI's title or quota probes) get Default. Test-only: never
// imported by production code.
package fakeprovider

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Step is one scripted answer. Build steps with the constructors below.
type Step struct {
	Kind       string        // the constructor's name in snake case: success, rate_limit, …
	Text       string        // the assistant's text (success, refusal, question, stall)
	Tool       *ToolCall     // a tool call the assistant makes (tool_use, question)
	RetryAfter time.Duration // rate_limit: the retry-after header
	ResetAt    time.Time     // usage_limit: when the plan's window resets
}

// ToolCall is a tool the assistant calls, with its JSON input.
type ToolCall struct {
	Name  string
	Input string // JSON object
	// Namespace groups the tool, as the OpenAI Responses API names an MCP
	// server's tools (namespace "mcp__drover", name "drover_block"); the
	// Anthropic writer joins them the way Claude Code names such tools
	// ("mcp__drover__drover_block"). "" for a plain tool.
	Namespace string
}

// FullName is the tool's name with its namespace, as Claude Code spells an
// MCP tool.
func (c ToolCall) FullName() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "__" + c.Name
}

// Success answers with text and a clean end of turn.
func Success(text string) Step { return Step{Kind: "success", Text: text} }

// ToolUse answers with a call of tool name with the JSON input.
func ToolUse(name, input string) Step {
	return Step{Kind: "tool_use", Tool: &ToolCall{Name: name, Input: input}}
}

// MCPToolUse answers with a call of tool of the MCP server named server:
// mcp__SERVER__TOOL for Anthropic, namespace mcp__SERVER with name TOOL for
// OpenAI.
func MCPToolUse(server, tool, input string) Step {
	return Step{Kind: "tool_use", Tool: &ToolCall{Namespace: "mcp__" + server, Name: tool, Input: input}}
}

// Question asks the user: Anthropic's AskUserQuestion tool (which a CLI in
// print mode denies), and for APIs without one, a final message that ends
// with drover's protocol line "QUESTION: q" (what drover's default prompt
// asks a headless agent to do; policy.QuestionLine reads it).
func Question(q string) Step {
	in := `{"questions":[{"question":` + quote(q) + `,"header":"Choice","multiSelect":false,"options":[{"label":"staging","description":"deploy to staging"},{"label":"production","description":"deploy to production"}]}]}`
	return Step{Kind: "question", Text: q, Tool: &ToolCall{Name: "AskUserQuestion", Input: in}}
}

// answerText is what an API without an ask-the-user tool answers for the
// step: for a question, a final message ending in drover's "QUESTION: q"
// protocol line; otherwise the step's text.
func (st Step) answerText() string {
	if st.Kind == "question" {
		return "I cannot go on without a decision.\nQUESTION: " + st.Text
	}
	return st.Text
}

// RateLimit is HTTP 429 with a retry-after header.
func RateLimit(after time.Duration) Step { return Step{Kind: "rate_limit", RetryAfter: after} }

// Unauthorized is HTTP 401 (a bad key).
func Unauthorized() Step { return Step{Kind: "unauthorized"} }

// Forbidden is HTTP 403 (the key may not use this).
func Forbidden() Step { return Step{Kind: "forbidden"} }

// CreditBalance is the API's "credit balance too low" (Anthropic 400
// billing; OpenAI 429 insufficient_quota).
func CreditBalance() Step { return Step{Kind: "credit_balance"} }

// UsageLimit is a plan's usage window used up, resetting at reset.
func UsageLimit(reset time.Time) Step { return Step{Kind: "usage_limit", ResetAt: reset} }

// ServerError is HTTP 500.
func ServerError() Step { return Step{Kind: "server_error"} }

// Unavailable is HTTP 503 (model at capacity).
func Unavailable() Step { return Step{Kind: "unavailable"} }

// Overloaded is Anthropic's HTTP 529 overloaded_error (503 on OpenAI).
func Overloaded() Step { return Step{Kind: "overloaded"} }

// ResetMidStream sends the stream's first events, then resets the
// connection.
func ResetMidStream() Step { return Step{Kind: "reset_midstream"} }

// Hang accepts the request and never sends a byte, until the client goes.
func Hang() Step { return Step{Kind: "hang"} }

// Stall sends the stream's first events and text, then nothing more.
func Stall() Step { return Step{Kind: "stall", Text: "Working on it"} }

// PromptTooLong is HTTP 400 with the API's context-length error.
func PromptTooLong() Step { return Step{Kind: "prompt_too_long"} }

// Refusal ends the turn with stop_reason "refusal" (OpenAI: a refusal
// content part).
func Refusal() Step { return Step{Kind: "refusal", Text: "I can't help with that."} }

// MaxTokens ends the answer at the output limit: Gemini's finishReason
// MAX_TOKENS (the other APIs answer it as a plain success for now).
func MaxTokens(text string) Step { return Step{Kind: "max_tokens", Text: text} }

// Request is one request the server received.
type Request struct {
	At      time.Time
	Method  string
	Path    string // with the query
	Header  http.Header
	Body    string
	Marker  string // the script it was answered from ("" = Default)
	Step    string // the Kind of the step it got
	Dropped bool   // the connection was reset or abandoned
}

// Server is the fake provider. Its zero value is not usable: call New.
type Server struct {
	srv    *httptest.Server
	closed string // a URL where nothing listens

	mu       sync.Mutex
	scripts  map[string][]Step
	next     map[string]int
	def      Step
	requests []Request
	stop     chan struct{}
}

// New starts a server on 127.0.0.1 and closes it when t ends (hanging and
// stalled responses are released then).
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{scripts: map[string][]Step{}, next: map[string]int{}, def: Success("Done."), stop: make(chan struct{})}
	mux := http.NewServeMux()
	s.routeAnthropic(mux)
	s.routeOpenAI(mux)
	s.routeGemini(mux)
	s.routeChat(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, "", "", "not_found")
		http.Error(w, `{"error":{"type":"not_found_error","message":"no such route"}}`, http.StatusNotFound)
	})
	s.srv = httptest.NewServer(mux)
	s.closed = closedURL(t)
	t.Cleanup(func() {
		close(s.stop)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// URL is the server's base URL (no trailing slash, no /v1).
func (s *Server) URL() string { return s.srv.URL }

// ClosedURL is a base URL on 127.0.0.1 where nothing listens: pointing a
// CLI there is the "connection refused" scenario.
func (s *Server) ClosedURL() string { return s.closed }

// Script makes requests whose body contains marker take steps in order,
// the last one repeating.
func (s *Server) Script(marker string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[marker] = steps
	s.next[marker] = 0
}

// Default sets the step for requests that carry no scripted marker.
func (s *Server) Default(st Step) {
	s.mu.Lock()
	s.def = st
	s.mu.Unlock()
}

// Requests returns a copy of the log of requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Marked returns the logged requests answered from marker's script.
func (s *Server) Marked(marker string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Marker == marker {
			out = append(out, r)
		}
	}
	return out
}

// take picks the step for a request body, logs the request and returns
// the step with the request's index in the log.
func (s *Server) take(r *http.Request, body string) (Step, int) {
	s.mu.Lock()
	markers := make([]string, 0, len(s.scripts))
	for m := range s.scripts {
		markers = append(markers, m)
	}
	sort.Slice(markers, func(i, j int) bool { return len(markers[i]) > len(markers[j]) })
	st, marker := s.def, ""
	for _, m := range markers {
		if strings.Contains(body, m) {
			steps := s.scripts[m]
			i := s.next[m]
			if i < len(steps)-1 {
				s.next[m] = i + 1
			}
			st, marker = steps[i], m
			break
		}
	}
	s.mu.Unlock()
	return st, s.record(r, body, marker, st.Kind)
}

// secretHeaders are never kept in the log.
var secretHeaders = []string{"Authorization", "X-Api-Key", "Cookie", "Openai-Api-Key", "X-Goog-Api-Key"}

// record logs a request and returns its index in the log.
func (s *Server) record(r *http.Request, body, marker, step string) int {
	h := r.Header.Clone()
	for _, k := range secretHeaders {
		if h.Get(k) != "" {
			h.Set(k, "[redacted]")
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{At: time.Now(), Method: r.Method, Path: r.URL.RequestURI(),
		Header: h, Body: body, Marker: marker, Step: step})
	i := len(s.requests) - 1
	s.mu.Unlock()
	return i
}

// markDropped flags logged request i as dropped.
func (s *Server) markDropped(i int) {
	s.mu.Lock()
	s.requests[i].Dropped = true
	s.mu.Unlock()
}

// hang holds logged request idx open until the client leaves or the
// server closes, and flags it as dropped.
func (s *Server) hang(r *http.Request, idx int) {
	select {
	case <-r.Context().Done():
	case <-s.stop:
	}
	s.markDropped(idx)
}

// halfBody fails a plain (not streamed) answer in transport, as kind says:
// half of its JSON body msg, then the connection reset (reset_midstream)
// or held open (stall).
func (s *Server) halfBody(w http.ResponseWriter, r *http.Request, idx int, kind, contentType, msg string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, msg[:len(msg)/2])
	if kind == "stall" {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		s.hang(r, idx)
		return
	}
	s.drop(w, idx)
}

// drop flags logged request idx as dropped and resets its connection.
func (s *Server) drop(w http.ResponseWriter, idx int) {
	s.markDropped(idx)
	reset(w)
}

// reset drops the connection without a proper end (RST where it can),
// a moment after the events written so far went out: an RST at once makes
// the client's kernel discard what it had not read yet.
func reset(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	time.Sleep(200 * time.Millisecond)
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// closedURL binds a port on 127.0.0.1 and closes it again.
func closedURL(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeprovider: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}
