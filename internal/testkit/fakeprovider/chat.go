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

// The OpenAI Chat Completions API: POST /v1/chat/completions, SSE when
// "stream": true (what OpenAI-compatible clients such as opencode's
// @ai-sdk/openai-compatible provider send). Shapes:
// https://platform.openai.com/docs/api-reference/chat-streaming (chunks of
// choices[].delta, tool_calls deltas, finish_reason, a final usage chunk
// when stream_options.include_usage, then "data: [DONE]") and
// https://platform.openai.com/docs/guides/error-codes (errors are
// {"error":{"message","type","param","code"}}, the same table as the
// Responses API in openai.go).
func (s *Server) routeChat(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
}

// noKeyError is OpenAI's answer to a request without an API key.
const noKeyError = `{"error":{"message":"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).","type":"invalid_request_error","param":null,"code":null}}`

// chatRequest is what the handler reads from a request body.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // a string or a list of parts
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// titleRequest reports opencode's session-title request: no tools, and a
// system prompt that makes the model a title generator. It quotes the
// user's prompt (and so the marker) but is not the agent's turn, so it
// takes no step of the script.
func (r chatRequest) titleRequest() bool {
	if len(r.Tools) > 0 || len(r.Messages) == 0 || r.Messages[0].Role != "system" {
		return false
	}
	c, _ := r.Messages[0].Content.(string)
	return strings.Contains(c, "title generator")
}

// offers reports whether the request offers the model a tool called name.
func (r chatRequest) offers(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	var req chatRequest
	json.Unmarshal(b, &req)
	w.Header().Set("x-request-id", "req_fake_"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer")) == "" {
		s.record(r, body, "", "no_api_key")
		writeJSON(w, http.StatusUnauthorized, nil, noKeyError)
		return
	}
	var st Step
	var idx int
	if req.titleRequest() {
		st, idx = Success("Fake session title"), s.record(r, body, "", "title")
	} else {
		st, idx = s.take(r, body)
	}
	if writeOpenAIError(w, st) {
		return
	}
	if st.Kind == "hang" {
		s.hang(r, idx)
		return
	}
	c := chunker{id: "chatcmpl-fake-" + strconv.FormatInt(time.Now().UnixNano(), 36), model: chatModel(req.Model)}
	sse := newSSE(w)
	data := func(d string) { chatData(sse, d) }
	data(c.delta(`{"role":"assistant","content":""}`, ""))
	switch st.Kind {
	case "reset_midstream":
		s.drop(w, idx)
		return
	case "stall":
		data(c.delta(`{"content":`+quote(st.Text)+`}`, ""))
		s.hang(r, idx)
		return
	}
	finish := "stop"
	tool := st.Tool
	text := st.Text
	switch st.Kind {
	case "refusal":
		// A blocked answer: the refusal text and finish_reason
		// content_filter, no content.
		data(c.delta(`{"refusal":`+quote(text)+`}`, ""))
		text, finish = "", "content_filter"
	case "question":
		// Chat Completions has no question tool of its own: ask with the
		// client's tool when it offers one (opencode's "question"), else
		// in words, ending with drover's QUESTION: line.
		tool = nil
		text = st.answerText()
		if req.offers("question") {
			tool = &ToolCall{Name: "question", Input: `{"questions":[{"question":` + quote(st.Text) +
				`,"header":"Choice","options":[{"label":"staging","description":"deploy to staging"},{"label":"production","description":"deploy to production"}]}]}`}
			text = ""
		}
	}
	if text != "" {
		data(c.delta(`{"content":`+quote(text)+`}`, ""))
	}
	if tool != nil {
		id := "call_fake_" + strconv.FormatInt(time.Now().UnixNano(), 36)
		data(c.delta(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%s,"arguments":""}}]}`, id, quote(tool.Name)), ""))
		data(c.delta(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, quote(tool.Input)), ""))
		finish = "tool_calls"
	}
	data(c.delta(`{}`, finish))
	in := len(body)/4 + 1
	data(fmt.Sprintf(`{"id":%q,"object":"chat.completion.chunk","created":%d,"model":%s,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":12,"total_tokens":%d}}`,
		c.id, time.Now().Unix(), quote(c.model), in, in+12))
	data("[DONE]")
}

// chunker writes the chat.completion.chunk objects of one response.
type chunker struct{ id, model string }

// delta is one chunk with choices[0].delta d and finish_reason finish
// ("" = null).
func (c chunker) delta(d, finish string) string {
	f := "null"
	if finish != "" {
		f = quote(finish)
	}
	return fmt.Sprintf(`{"id":%q,"object":"chat.completion.chunk","created":%d,"model":%s,"choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`,
		c.id, time.Now().Unix(), quote(c.model), d, f)
}

// chatModel is the model a chunk names: the request's, else gpt-fake.
func chatModel(m string) string {
	if m == "" {
		return "gpt-fake"
	}
	return m
}

// chatData writes one unnamed server-sent event (Chat Completions names
// none), flushing it.
func chatData(e *sse, d string) {
	fmt.Fprintf(e.w, "data: %s\n\n", d)
	if e.f != nil {
		e.f.Flush()
	}
}
