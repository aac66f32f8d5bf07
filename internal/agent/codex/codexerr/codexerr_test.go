package codexerr

import "testing"

// Each row is a text codex 0.171.0 printed against the fake provider
// (tests/realcli and the app-server notes in codex/appserver).
func TestStatus(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want int
	}{
		{"unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1/v1/responses", 401},
		{"exceeded retry limit, last status: 429 Too Many Requests, request id: req_fake", 429},
		{"We’re currently experiencing high demand, which may cause temporary errors.", 500},
		{"Selected model is at capacity. Please try a different model.", 503},
		{"stream disconnected before completion: Transport error", 0},
	} {
		if got := Status(c.msg); got != c.want {
			t.Errorf("Status(%q) = %d, want %d", c.msg, got, c.want)
		}
	}
}
