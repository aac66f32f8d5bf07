package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Anthropic Messages API: POST /v1/messages (SSE when the body says
// "stream": true), POST /v1/messages/count_tokens, and HEAD or GET / for a
// health probe. Shapes: https://docs.anthropic.com/en/api/messages-streaming
// and https://docs.anthropic.com/en/api/errors.
func (s *Server) routeAnthropic(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.record(r, string(b), "", "count_tokens")
		writeJSON(w, http.StatusOK, nil, `{"input_tokens":`+strconv.Itoa(len(b)/4+1)+`}`)
	})
	mux.HandleFunc("HEAD /{$}", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, "", "", "health")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, "", "", "health")
		writeJSON(w, http.StatusOK, nil, `{"ok":true}`)
	})
}

// anthropicErrors are the HTTP errors of each step: status, error type,
// message.
var anthropicErrors = map[string]struct {
	status    int
	typ, text string
}{
	"rate_limit":      {429, "rate_limit_error", "This request would exceed your organization's rate limit of 50 requests per minute. Please try again later."},
	"usage_limit":     {429, "rate_limit_error", "You have reached your usage limit for this plan."},
	"unauthorized":    {401, "authentication_error", "invalid x-api-key"},
	"forbidden":       {403, "permission_error", "Your API key does not have permission to use the specified resource."},
	"credit_balance":  {400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},
	"prompt_too_long": {400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"},
	"server_error":    {500, "api_error", "Internal server error"},
	"unavailable":     {503, "api_error", "Service Unavailable"},
	"overloaded":      {529, "overloaded_error", "Overloaded"},
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	st, idx := s.take(r, body)
	var req struct {
		Stream bool   `json:"stream"`
		Model  string `json:"model"`
	}
	json.Unmarshal(b, &req)
	w.Header().Set("request-id", "req_fake_"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if e, ok := anthropicErrors[st.Kind]; ok {
		h := http.Header{}
		switch st.Kind {
		case "rate_limit":
			h.Set("retry-after", strconv.Itoa(int(st.RetryAfter.Seconds())))
			h.Set("anthropic-ratelimit-requests-limit", "50")
			h.Set("anthropic-ratelimit-requests-remaining", "0")
			h.Set("anthropic-ratelimit-requests-reset", time.Now().Add(st.RetryAfter).UTC().Format(time.RFC3339))
		case "usage_limit":
			// What a subscription (OAuth) account gets when its five-hour
			// window is used up; with an API key the CLI reports a plain 429.
			reset := strconv.FormatInt(st.ResetAt.Unix(), 10)
			h.Set("anthropic-ratelimit-unified-status", "rejected")
			h.Set("anthropic-ratelimit-unified-reset", reset)
			h.Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
			h.Set("anthropic-ratelimit-unified-5h-status", "rejected")
			h.Set("anthropic-ratelimit-unified-5h-reset", reset)
			h.Set("anthropic-ratelimit-unified-overage-status", "rejected")
			h.Set("retry-after", strconv.Itoa(int(time.Until(st.ResetAt).Seconds())))
		}
		writeJSON(w, e.status, h, fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, e.typ, e.text))
		return
	}
	switch st.Kind {
	case "hang":
		s.hang(r, idx)
		return
	}
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	if !req.Stream {
		// Claude Code falls back to a plain request when a stream fails;
		// a transport failure must fail that one too.
		msg := anthropicMessage(st, model)
		switch st.Kind {
		case "reset_midstream", "stall":
			s.halfBody(w, r, idx, st.Kind, "application/json", msg)
			return
		}
		writeJSON(w, http.StatusOK, nil, msg)
		return
	}
	sse := newSSE(w)
	sse.event("message_start", `{"type":"message_start","message":{"id":"msg_fake","type":"message","role":"assistant","model":`+quote(model)+`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+strconv.Itoa(len(body)/4+1)+`,"output_tokens":1}}}`)
	sse.event("ping", `{"type":"ping"}`)
	switch st.Kind {
	case "reset_midstream":
		sse.event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s.drop(w, idx)
		return
	case "stall":
		sse.event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		sse.event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+quote(st.Text)+`}}`)
		s.hang(r, idx)
		return
	}
	stop := "end_turn"
	i := 0
	if st.Text != "" {
		sse.event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
		sse.event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, quote(st.Text)))
		sse.event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		i++
	}
	if st.Tool != nil {
		sse.event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_fake_%d","name":%s,"input":{}}}`, i, time.Now().UnixNano(), quote(st.Tool.FullName())))
		sse.event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, quote(st.Tool.Input)))
		sse.event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		stop = "tool_use"
	}
	if st.Kind == "refusal" {
		stop = "refusal"
	}
	sse.event("message_delta", `{"type":"message_delta","delta":{"stop_reason":`+quote(stop)+`,"stop_sequence":null},"usage":{"output_tokens":12}}`)
	sse.event("message_stop", `{"type":"message_stop"}`)
}

// anthropicMessage is a whole (non-streamed) message for st.
func anthropicMessage(st Step, model string) string {
	var content []string
	stop := "end_turn"
	if st.Text != "" {
		content = append(content, `{"type":"text","text":`+quote(st.Text)+`}`)
	}
	if st.Tool != nil {
		content = append(content, `{"type":"tool_use","id":"toolu_fake","name":`+quote(st.Tool.Name)+`,"input":`+st.Tool.Input+`}`)
		stop = "tool_use"
	}
	if st.Kind == "refusal" {
		stop = "refusal"
	}
	return `{"id":"msg_fake","type":"message","role":"assistant","model":` + quote(model) + `,"content":[` + strings.Join(content, ",") +
		`],"stop_reason":` + quote(stop) + `,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":12}}`
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) event(name, data string) {
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, data)
	if e.f != nil {
		e.f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, h http.Header, body string) {
	for k, v := range h {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
