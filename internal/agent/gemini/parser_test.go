package gemini

import (
	"bytes"
	"os"
	"testing"
)

func feedFixture(t *testing.T, name string) *Parser {
	t.Helper()
	p := NewParser()
	for _, stream := range []string{"stdout", "stderr"} {
		b, err := os.ReadFile("testdata/" + name + "/" + stream)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if stream == "stdout" {
				p.Feed(l)
			} else {
				p.FeedStderr(l)
			}
		}
	}
	return p
}

// TestUsageAndText: tokens come from the result's stats, the final text is
// the assistant's deltas since the last tool call, and the session id is
// the init event's.
func TestUsageAndText(t *testing.T) {
	p := feedFixture(t, "tool_call")
	s := p.Structured()
	if s.TokensIn != 2100 || s.TokensOut != 29 || s.CostKnown {
		t.Errorf("tokens %d/%d cost known %v; want 2100/29 and no cost", s.TokensIn, s.TokensOut, s.CostKnown)
	}
	if s.ResultText != "The command printed drover-tool-ok." || !s.Finished || s.IsError {
		t.Errorf("result %q finished %v error %v", s.ResultText, s.Finished, s.IsError)
	}
	if s.SessionID != "21308899-d9f0-4ddf-b73b-e0fcaf317613" {
		t.Errorf("session %q", s.SessionID)
	}
	if last, _, _, _ := p.Progress(); last != "The command printed drover-tool-ok." {
		t.Errorf("last line %q", last)
	}
}

// TestErrorsByStructure: the HTTP status comes from the embedded API error,
// or from stderr when the result's message dropped it; retries are counted.
func TestErrorsByStructure(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		errType string
		retries bool
	}{
		{"auth_401", 401, "authentication_failed", false},
		{"api_key_invalid_400", 400, "authentication_failed", false},
		{"overloaded_503", 503, "", true},
		{"quota_daily_429", 429, "", false},
		{"missing_api_key", 0, "authentication_failed", false},
	}
	for _, c := range cases {
		s := feedFixture(t, c.name).Structured()
		if s.APIErrorStatus != c.status || s.ErrorType != c.errType || (s.Retries > 0) != c.retries || !s.IsError {
			t.Errorf("%s: status %d type %q retries %d error %v; want %d %q retries %v",
				c.name, s.APIErrorStatus, s.ErrorType, s.Retries, s.IsError, c.status, c.errType, c.retries)
		}
	}
}

// TestTransportFromStderr: a request that got no answer from a server
// (refused, DNS, a stream cut mid-way) is the network. The CLI's result
// says only "[API Error: terminated]" for a cut stream; the errno is in the
// error object on stderr (lines from a real-CLI run of 0.61.0 against
// fakeprovider's reset_midstream step).
func TestTransportFromStderr(t *testing.T) {
	p := NewParser()
	p.Feed([]byte(`{"type":"init","session_id":"s1","model":"gemini-2.5-flash"}`))
	p.Feed([]byte(`{"type":"message","role":"assistant","content":"Let me","delta":true}`))
	p.Feed([]byte(`{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: terminated]"}}`))
	for _, l := range []string{
		"Error when talking to Gemini API Full report available at: /tmp/x.json TypeError: terminated",
		"    at Fetch.onAborted (node:internal/deps/undici/undici:11350:53)",
		"  [cause]: Error: read ECONNRESET",
		"      at TCP.onStreamRead (node:internal/stream_base_commons:218:20)",
	} {
		p.FeedStderr([]byte(l))
	}
	if s := p.Structured(); s.APIError != "connection_failed" || s.APIErrorStatus != 0 {
		t.Errorf("cut stream: api error %q status %d; want connection_failed", s.APIError, s.APIErrorStatus)
	}
	for _, name := range []string{"connection_refused", "dns_failure"} {
		if s := feedFixture(t, name).Structured(); s.APIError != "connection_failed" {
			t.Errorf("%s: api error %q; want connection_failed", name, s.APIError)
		}
	}
	// An HTTP answer is not a transport failure, whatever stderr says.
	if s := feedFixture(t, "server_500").Structured(); s.APIError != "" || s.APIErrorStatus != 500 {
		t.Errorf("server_500: api error %q status %d", s.APIError, s.APIErrorStatus)
	}
}
