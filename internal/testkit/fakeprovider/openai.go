package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// The OpenAI Responses API: POST /v1/responses (SSE when "stream": true)
// and GET /v1/models. Shapes:
// https://platform.openai.com/docs/api-reference/responses-streaming and
// https://platform.openai.com/docs/guides/error-codes.
func (s *Server) routeOpenAI(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/responses", s.openaiResponses)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, "", "", "models")
		writeJSON(w, http.StatusOK, nil, `{"object":"list","data":[{"id":"gpt-fake","object":"model","created":1700000000,"owned_by":"fakeprovider"}],"models":[]}`)
	})
}

// openaiErrors are the HTTP errors of each step: status, type, code,
// message.
var openaiErrors = map[string]struct {
	status          int
	typ, code, text string
}{
	"rate_limit":      {429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-fake in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s."},
	"usage_limit":     {429, "usage_limit_reached", "usage_limit_reached", "The usage limit has been reached"},
	"unauthorized":    {401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: fake-***-key. You can find your API key at https://platform.openai.com/account/api-keys."},
	"forbidden":       {403, "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"},
	"credit_balance":  {429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."},
	"prompt_too_long": {400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model. Please adjust your input and try again."},
	"server_error":    {500, "server_error", "server_error", "The server had an error while processing your request. Sorry about that!"},
	"unavailable":     {503, "server_error", "model_at_capacity", "Selected model is at capacity. Please try a different model."},
	"overloaded":      {503, "server_error", "server_is_overloaded", "The server is overloaded. Please try again later."},
}

func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	st, idx := s.take(r, body)
	var req struct {
		Model string `json:"model"`
	}
	json.Unmarshal(b, &req)
	w.Header().Set("x-request-id", "req_fake_"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if writeOpenAIError(w, st) {
		return
	}
	if st.Kind == "hang" {
		s.hang(r, idx)
		return
	}
	model := req.Model
	if model == "" {
		model = "gpt-fake"
	}
	id := "resp_fake_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	sse := newSSE(w)
	sse.event("response.created", `{"type":"response.created","response":{"id":"`+id+`","object":"response","status":"in_progress","model":`+quote(model)+`,"output":[]}}`)
	sse.event("response.in_progress", `{"type":"response.in_progress","response":{"id":"`+id+`","object":"response","status":"in_progress","output":[]}}`)
	text := st.answerText()
	switch st.Kind {
	case "reset_midstream":
		s.drop(w, idx)
		return
	case "stall":
		sse.event("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_fake","type":"message","role":"assistant","status":"in_progress","content":[]}}`)
		sse.event("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_fake","output_index":0,"content_index":0,"delta":`+quote(text)+`}`)
		s.hang(r, idx)
		return
	}
	var items []string
	if text != "" {
		part := `{"type":"output_text","text":` + quote(text) + `,"annotations":[]}`
		if st.Kind == "refusal" {
			part = `{"type":"refusal","refusal":` + quote(text) + `}`
		}
		n := len(items)
		sse.event("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":{"id":"msg_fake","type":"message","role":"assistant","status":"in_progress","content":[]}}`, n))
		if st.Kind != "refusal" {
			sse.event("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","item_id":"msg_fake","output_index":%d,"content_index":0,"delta":%s}`, n, quote(text)))
		}
		item := `{"id":"msg_fake","type":"message","role":"assistant","status":"completed","content":[` + part + `]}`
		sse.event("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, n, item))
		items = append(items, item)
	}
	if st.Tool != nil && st.Kind != "question" {
		n := len(items)
		ns := ""
		if st.Tool.Namespace != "" {
			ns = `"namespace":` + quote(st.Tool.Namespace) + `,`
		}
		item := fmt.Sprintf(`{"id":"fc_fake_%d","type":"function_call","status":"completed","call_id":"call_fake_%d",%s"name":%s,"arguments":%s}`,
			n, time.Now().UnixNano(), ns, quote(st.Tool.Name), quote(st.Tool.Input))
		sse.event("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":%d,"item":%s}`, n, item))
		sse.event("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, n, item))
		items = append(items, item)
	}
	out := "["
	for i, it := range items {
		if i > 0 {
			out += ","
		}
		out += it
	}
	out += "]"
	in := len(body)/4 + 1
	sse.event("response.completed", fmt.Sprintf(`{"type":"response.completed","response":{"id":%q,"object":"response","status":"completed","model":%s,"output":%s,"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}}`,
		id, quote(model), out, in, in+12))
}

// writeOpenAIError answers an error step with OpenAI's documented error
// object (the Responses and Chat Completions APIs share it) and reports
// whether st was one.
func writeOpenAIError(w http.ResponseWriter, st Step) bool {
	e, ok := openaiErrors[st.Kind]
	if !ok {
		return false
	}
	h := http.Header{}
	extra := ""
	switch st.Kind {
	case "rate_limit":
		h.Set("retry-after", strconv.Itoa(int(st.RetryAfter.Seconds())))
		h.Set("x-ratelimit-remaining-requests", "0")
		h.Set("x-ratelimit-reset-requests", strconv.Itoa(int(st.RetryAfter.Seconds()))+"s")
	case "usage_limit":
		in := int(time.Until(st.ResetAt).Seconds())
		extra = fmt.Sprintf(`,"plan_type":"plus","resets_at":%d,"resets_in_seconds":%d`, st.ResetAt.Unix(), in)
	}
	writeJSON(w, e.status, h, fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q%s}}`, e.text, e.typ, e.code, extra))
	return true
}
