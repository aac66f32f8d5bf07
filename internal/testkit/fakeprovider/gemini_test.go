package fakeprovider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// geminiStream is the path of a streamed Gemini turn for model.
func geminiStream(s *Server, model string) string {
	return s.URL() + "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
}

// TestGeminiStream: a scripted success is one SSE data event holding a
// GenerateContentResponse with the text part, STOP and usageMetadata; a
// tool call is a functionCall part.
func TestGeminiStream(t *testing.T) {
	s := New(t)
	s.Script("GS", Success("hello"), ToolUse("run_shell_command", `{"command":"ls"}`))
	r, b, err := post(t, geminiStream(s, "gemini-2.5-flash"), `{"contents":[{"role":"user","parts":[{"text":"GS"}]}]}`)
	if err != nil || r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %v %v", err, r)
	}
	var resp struct {
		Candidates []struct {
			Content struct {
				Role  string `json:"role"`
				Parts []struct {
					Text         string `json:"text"`
					FunctionCall *struct {
						Name string         `json:"name"`
						Args map[string]any `json:"args"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		UsageMetadata struct {
			PromptTokenCount     int `json:"promptTokenCount"`
			CandidatesTokenCount int `json:"candidatesTokenCount"`
		} `json:"usageMetadata"`
	}
	data, ok := strings.CutPrefix(strings.TrimSpace(b), "data: ")
	if !ok || json.Unmarshal([]byte(data), &resp) != nil || len(resp.Candidates) != 1 {
		t.Fatalf("not one data event with a candidate: %q", b)
	}
	c := resp.Candidates[0]
	if c.Content.Role != "model" || len(c.Content.Parts) != 1 || c.Content.Parts[0].Text != "hello" || c.FinishReason != "STOP" ||
		resp.UsageMetadata.PromptTokenCount == 0 || resp.UsageMetadata.CandidatesTokenCount == 0 {
		t.Fatalf("success chunk: %+v", resp)
	}
	_, b, _ = post(t, geminiStream(s, "gemini-2.5-flash"), `{"contents":"GS"}`)
	if !strings.Contains(b, `"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}`) {
		t.Fatalf("tool call: %q", b)
	}
	req, _ := http.NewRequest("POST", geminiStream(s, "gemini-2.5-flash"), strings.NewReader(`{"contents":"GS"}`))
	req.Header.Set("x-goog-api-key", "AIza-secret")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	got := s.Marked("GS")
	if len(got) != 3 || got[0].Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" {
		t.Fatalf("log: %+v", got)
	}
	if k := got[2].Header.Get("x-goog-api-key"); k != "[redacted]" {
		t.Errorf("the Gemini key kept in the log: %q", k)
	}
}

// TestGeminiErrors: each error step is a google.rpc.Status with the HTTP
// code, the status name the API documents for it and its details.
func TestGeminiErrors(t *testing.T) {
	s := New(t)
	cases := []struct {
		step         Step
		code         int
		status, want string
	}{
		{RateLimit(40 * time.Second), 429, "RESOURCE_EXHAUSTED", `"retryDelay":"40s"`},
		{UsageLimit(time.Now().Add(time.Hour)), 429, "RESOURCE_EXHAUSTED", `PerDay`},
		{Unauthorized(), 401, "UNAUTHENTICATED", "invalid authentication credentials"},
		{Forbidden(), 403, "PERMISSION_DENIED", "unregistered callers"},
		{CreditBalance(), 402, "RESOURCE_EXHAUSTED", "prepayment credits are depleted"},
		{PromptTooLong(), 400, "INVALID_ARGUMENT", "exceeds the maximum number of tokens"},
		{ServerError(), 500, "INTERNAL", "internal error"},
		{Unavailable(), 503, "UNAVAILABLE", "overloaded"},
		{Overloaded(), 503, "UNAVAILABLE", "unavailable"},
	}
	for _, c := range cases {
		m := "GE-" + c.step.Kind
		s.Script(m, c.step)
		r, b, err := post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":"`+m+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(b), &e) != nil || r.StatusCode != c.code || e.Error.Code != c.code || e.Error.Status != c.status || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d %s; want %d %s with %q", c.step.Kind, r.StatusCode, b, c.code, c.status, c.want)
		}
	}
}

// TestGeminiEndings: a refusal is a candidate blocked for SAFETY with no
// parts, MaxTokens ends with MAX_TOKENS, countTokens and the model list
// answer without taking a step, and a reset drops the stream after its
// first chunk.
func TestGeminiEndings(t *testing.T) {
	s := New(t)
	s.Script("REF", Refusal())
	s.Script("MAX", MaxTokens("partial"))
	s.Script("RST", ResetMidStream())
	_, b, _ := post(t, geminiStream(s, "g"), `{"m":"REF"}`)
	if !strings.Contains(b, `"parts":[]`) || !strings.Contains(b, `"finishReason":"SAFETY"`) || !strings.Contains(b, `"blocked":true`) {
		t.Errorf("refusal: %q", b)
	}
	_, b, _ = post(t, geminiStream(s, "g"), `{"m":"MAX"}`)
	if !strings.Contains(b, `"finishReason":"MAX_TOKENS"`) || !strings.Contains(b, `"text":"partial"`) {
		t.Errorf("max tokens: %q", b)
	}
	if _, _, err := post(t, geminiStream(s, "g"), `{"m":"RST"}`); err == nil {
		t.Error("a reset stream read cleanly")
	}
	_, b, _ = post(t, s.URL()+"/v1beta/models/g:countTokens", `{"m":"REF"}`)
	if !strings.Contains(b, `"totalTokens":`) {
		t.Errorf("countTokens: %q", b)
	}
	if got := s.Marked("REF"); len(got) != 1 {
		t.Errorf("countTokens took a scripted step: %+v", got)
	}
}
