package fakeprovider

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (*http.Response, string, error) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("x-api-key", "sk-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestScriptedStepsInOrderThenRepeat(t *testing.T) {
	s := New(t)
	s.Script("M1", RateLimit(7*time.Second), Success("fine"))
	r, b, err := post(t, s.URL()+"/v1/messages", `{"stream":true,"messages":[{"role":"user","content":"M1"}]}`)
	if err != nil || r.StatusCode != 429 || r.Header.Get("retry-after") != "7" || !strings.Contains(b, `"type":"rate_limit_error"`) {
		t.Fatalf("first request: %v %v %q", err, r, b)
	}
	for i := 0; i < 2; i++ {
		_, b, err = post(t, s.URL()+"/v1/messages", `{"stream":true,"messages":[{"role":"user","content":"M1"}]}`)
		if err != nil || !strings.Contains(b, "event: message_stop") || !strings.Contains(b, `"text":"fine"`) {
			t.Fatalf("request %d: %v %q", i+2, err, b)
		}
	}
	_, b, _ = post(t, s.URL()+"/v1/responses", `{"stream":true,"input":"nothing scripted"}`)
	if !strings.Contains(b, "response.completed") || !strings.Contains(b, `"input_tokens"`) {
		t.Fatalf("default step on responses: %q", b)
	}
	got := s.Requests()
	if len(got) != 4 || len(s.Marked("M1")) != 3 || got[3].Marker != "" || got[0].Step != "rate_limit" {
		t.Fatalf("log: %+v", got)
	}
	if got[0].Header.Get("x-api-key") != "[redacted]" {
		t.Fatalf("secret kept in the log: %v", got[0].Header)
	}
}

func TestErrorShapes(t *testing.T) {
	s := New(t)
	s.Script("OA", CreditBalance())
	s.Script("AN", Overloaded())
	r, b, _ := post(t, s.URL()+"/v1/responses", `{"input":"OA"}`)
	if r.StatusCode != 429 || !strings.Contains(b, `"code":"insufficient_quota"`) {
		t.Fatalf("openai credit: %d %s", r.StatusCode, b)
	}
	r, b, _ = post(t, s.URL()+"/v1/messages", `{"messages":"AN"}`)
	if r.StatusCode != 529 || !strings.Contains(b, `"overloaded_error"`) {
		t.Fatalf("anthropic overloaded: %d %s", r.StatusCode, b)
	}
}

func TestTransportFailures(t *testing.T) {
	s := New(t)
	s.Script("RST", ResetMidStream())
	s.Script("HANG", Hang())
	for _, body := range []string{`{"stream":true,"m":"RST"}`, `{"stream":false,"m":"RST"}`} {
		if _, _, err := post(t, s.URL()+"/v1/messages", body); err == nil {
			t.Fatalf("a reset response read cleanly: %s", body)
		}
	}
	if _, _, err := post(t, s.ClosedURL()+"/v1/messages", `{}`); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("closed URL: %v", err)
	}
	c := http.Client{Timeout: 300 * time.Millisecond}
	if _, err := c.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(`{"m":"HANG"}`)); err == nil {
		t.Fatal("a hanging request answered")
	}
	if m := s.Marked("RST"); len(m) != 2 || !m[0].Dropped || !m[1].Dropped {
		t.Fatalf("reset not logged as dropped: %+v", m)
	}
}
