package fakeprovider

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chatPost sends a Chat Completions request with a key (key "" = none).
func chatPost(t *testing.T, s *Server, key, body string) (*http.Response, []string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions", strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines = append(lines, d)
		} else if sc.Text() != "" && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			lines = append(lines, sc.Text())
		}
	}
	return resp, lines
}

// chatStream is what a client makes of a streamed answer.
type chatStream struct {
	content, refusal, finish string
	toolName, toolArgs       string
	usage                    bool
	done                     bool
}

func readChat(t *testing.T, lines []string) chatStream {
	t.Helper()
	var out chatStream
	for _, l := range lines {
		if l == "[DONE]" {
			out.done = true
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Refusal   string `json:"refusal"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("not a chunk: %q (%v)", l, err)
		}
		for _, ch := range c.Choices {
			out.content += ch.Delta.Content
			out.refusal += ch.Delta.Refusal
			for _, tc := range ch.Delta.ToolCalls {
				out.toolName += tc.Function.Name
				out.toolArgs += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				out.finish = *ch.FinishReason
			}
		}
		if c.Usage != nil && c.Usage.PromptTokens > 0 {
			out.usage = true
		}
	}
	return out
}

// TestChatStreams: text, a tool call, a refusal and a question come out as
// the chunks an OpenAI-compatible client assembles, each ending with a
// finish_reason, a usage chunk and [DONE].
func TestChatStreams(t *testing.T) {
	s := New(t)
	s.Script("TXT", Success("hello there"))
	s.Script("TOOL", ToolUse("bash", `{"command":"ls"}`))
	s.Script("REF", Refusal())
	s.Script("ASK", Question("Staging or production?"))
	cases := []struct {
		marker, tools string
		want          chatStream
	}{
		{"TXT", "", chatStream{content: "hello there", finish: "stop"}},
		{"TOOL", "", chatStream{toolName: "bash", toolArgs: `{"command":"ls"}`, finish: "tool_calls"}},
		{"REF", "", chatStream{refusal: "I can't help with that.", finish: "content_filter"}},
		{"ASK", "", chatStream{content: "I cannot go on without a decision.\nQUESTION: Staging or production?", finish: "stop"}},
	}
	for _, c := range cases {
		resp, lines := chatPost(t, s, "k", `{"stream":true,"messages":[{"role":"user","content":"`+c.marker+`"}]`+c.tools+`}`)
		got := readChat(t, lines)
		if resp.StatusCode != 200 || !got.done || !got.usage {
			t.Errorf("%s: status %d done %v usage %v", c.marker, resp.StatusCode, got.done, got.usage)
		}
		got.done, got.usage = false, false
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.marker, got, c.want)
		}
	}
	// A client that offers a question tool is asked with it.
	_, lines := chatPost(t, s, "k", `{"stream":true,"messages":[{"role":"user","content":"ASK"}],"tools":[{"type":"function","function":{"name":"question"}}]}`)
	if got := readChat(t, lines); got.toolName != "question" || !strings.Contains(got.toolArgs, "Staging or production?") || got.finish != "tool_calls" {
		t.Errorf("question with the tool offered: %+v", got)
	}
}

// TestChatErrors: every error step is its HTTP status with OpenAI's error
// object, and a request without a key is refused as OpenAI refuses it.
func TestChatErrors(t *testing.T) {
	s := New(t)
	steps := map[string]Step{"RL": RateLimit(7 * time.Second), "UA": Unauthorized(), "FB": Forbidden(), "CB": CreditBalance(),
		"SE": ServerError(), "UN": Unavailable(), "OV": Overloaded(), "PT": PromptTooLong(), "UL": UsageLimit(time.Now().Add(time.Hour))}
	want := map[string]struct {
		status int
		code   string
	}{"RL": {429, "rate_limit_exceeded"}, "UA": {401, "invalid_api_key"}, "FB": {403, "unsupported_country_region_territory"},
		"CB": {429, "insufficient_quota"}, "SE": {500, "server_error"}, "UN": {503, "model_at_capacity"}, "OV": {503, "server_is_overloaded"},
		"PT": {400, "context_length_exceeded"}, "UL": {429, "usage_limit_reached"}}
	for m, st := range steps {
		s.Script(m, st)
	}
	for m, w := range want {
		resp, lines := chatPost(t, s, "k", `{"stream":true,"messages":[{"role":"user","content":"`+m+`"}]}`)
		var e struct {
			Error struct {
				Message, Type string
				Code          string
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(strings.Join(lines, "\n")), &e); err != nil || resp.StatusCode != w.status || e.Error.Code != w.code || e.Error.Message == "" || e.Error.Type == "" {
			t.Errorf("%s: %d %q (%v), want %d code %s", m, resp.StatusCode, lines, err, w.status, w.code)
		}
		if m == "RL" && resp.Header.Get("retry-after") != "7" {
			t.Errorf("rate limit retry-after %q", resp.Header.Get("retry-after"))
		}
	}
	resp, lines := chatPost(t, s, "", `{"stream":true,"messages":[{"role":"user","content":"RL"}]}`)
	if resp.StatusCode != 401 || !strings.Contains(strings.Join(lines, ""), "You didn't provide an API key") {
		t.Errorf("no key: %d %q", resp.StatusCode, lines)
	}
}

// TestChatTitleRequestTakesNoStep: opencode's session-title request quotes
// the prompt (and so the marker), yet the agent's first request still gets
// the script's first step.
func TestChatTitleRequestTakesNoStep(t *testing.T) {
	s := New(t)
	s.Script("M", ToolUse("bash", `{}`), Success("after the tool"))
	_, lines := chatPost(t, s, "k", `{"stream":true,"messages":[{"role":"system","content":"You are a title generator. You output ONLY a thread title."},{"role":"user","content":"M"}]}`)
	if got := readChat(t, lines); got.content == "" || got.toolName != "" {
		t.Fatalf("title request: %+v", got)
	}
	_, lines = chatPost(t, s, "k", `{"stream":true,"messages":[{"role":"user","content":"M"}],"tools":[{"type":"function","function":{"name":"bash"}}]}`)
	if got := readChat(t, lines); got.toolName != "bash" {
		t.Errorf("agent's first request: %+v, want the tool call", got)
	}
	if m := s.Marked("M"); len(m) != 1 || m[0].Step != "tool_use" {
		t.Errorf("marked requests %+v", m)
	}
}

// TestChatTransportFailures: a reset and a stall drop the stream after its
// first chunk.
func TestChatTransportFailures(t *testing.T) {
	s := New(t)
	s.Script("RST", ResetMidStream())
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions", strings.NewReader(`{"stream":true,"m":"RST"}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_, err = bufio.NewReader(resp.Body).ReadString(0)
		resp.Body.Close()
	}
	if err == nil || err.Error() == "EOF" {
		t.Fatalf("a reset stream read cleanly: %v", err)
	}
	if m := s.Marked("RST"); len(m) != 1 || !m[0].Dropped {
		t.Errorf("reset not logged as dropped: %+v", m)
	}
}
