package opencode

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/policy"
)

func feedFixture(t *testing.T, name string) *Parser {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + "/stdout")
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser()
	for _, l := range bytes.Split(b, []byte("\n")) {
		p.Feed(l)
	}
	return p
}

// TestUsageAndCost: tokens and cost add up over the steps (a tool call is
// a step of its own), the final text is the last text part, and the run is
// finished only by a step that did not end in tool calls.
func TestUsageAndCost(t *testing.T) {
	p := feedFixture(t, "tool_call")
	s := p.Structured()
	if s.TokensIn != 2100 || s.TokensOut != 29 || !s.CostKnown || math.Abs(s.CostUSD-0.006735) > 1e-9 {
		t.Errorf("tokens %d/%d cost %v (known %v); want 2100/29 and $0.006735", s.TokensIn, s.TokensOut, s.CostUSD, s.CostKnown)
	}
	if s.ResultText != "The command printed drover-tool-ok." || !s.Finished || s.IsError || s.Turns != 2 {
		t.Errorf("result %q finished %v error %v turns %d", s.ResultText, s.Finished, s.IsError, s.Turns)
	}
	if s.SessionID != "ses_dcefeb643ffe2NgKzYeGZ2hg7d" {
		t.Errorf("session %q", s.SessionID)
	}
	half := NewParser()
	b, _ := os.ReadFile("testdata/tool_call/stdout")
	for _, l := range bytes.Split(b, []byte("\n"))[:2] {
		half.Feed(l)
	}
	if last, _, _, _ := half.Progress(); last != "→ bash" {
		t.Errorf("last line after the tool call %q", last)
	}
}

// TestErrorsByStructure: the HTTP status and the provider's error code are
// read from the error event, not from its wording.
func TestErrorsByStructure(t *testing.T) {
	cases := []struct {
		name, errType, terminal string
		status                  int
	}{
		{"auth_401", "authentication_failed", "", 401},
		{"quota_429", "billing_error", "", 429},
		{"rate_limit_429", "rate_limit", "", 429},
		{"overloaded_503", "server_error", "", 503},
		{"context_too_long", "", "prompt_too_long", 0},
		{"connection_refused", "", "", 0},
		{"reset_midstream", "", "", 0},
	}
	for _, c := range cases {
		s := feedFixture(t, c.name).Structured()
		transport := c.status == 0 && c.terminal == ""
		if s.APIErrorStatus != c.status || s.ErrorType != c.errType || s.TerminalReason != c.terminal || !s.IsError ||
			(s.APIError == "connection_failed") != transport {
			t.Errorf("%s: status %d type %q terminal %q api error %q error %v; want %d %q %q (connection_failed %v)",
				c.name, s.APIErrorStatus, s.ErrorType, s.TerminalReason, s.APIError, s.IsError, c.status, c.errType, c.terminal, transport)
		}
	}
}

// TestLengthThenStop: an answer cut at the output limit is a failure only
// if no later model call finishes it.
func TestLengthThenStop(t *testing.T) {
	p := NewParser()
	p.Feed([]byte(`{"type":"step_finish","part":{"reason":"length"}}`))
	if s := p.Structured(); !s.IsError || s.ErrorType != "max_output_tokens" {
		t.Fatalf("length: %+v", s)
	}
	p.Feed([]byte(`{"type":"step_finish","part":{"reason":"stop"}}`))
	if s := p.Structured(); s.IsError || s.ErrorType != "" {
		t.Errorf("length then stop is still an error: %+v", s)
	}
}

// TestPermissionRejected: a tool call whose permission the headless run
// rejected is a denial with a question naming the tool and its input; a
// tool that merely failed is not.
func TestPermissionRejected(t *testing.T) {
	s := feedFixture(t, "permission_rejected").Structured()
	if s.PermissionDenials != 1 || len(s.DeniedTools) != 1 || s.DeniedTools[0] != "bash" ||
		!strings.Contains(s.Question, `bash {"command":"echo drover-tool-ok"`) || s.Finished {
		t.Errorf("denials %d tools %v question %q finished %v", s.PermissionDenials, s.DeniedTools, s.Question, s.Finished)
	}
	p := NewParser()
	p.Feed([]byte(`{"type":"tool_use","part":{"type":"tool","tool":"read","state":{"status":"error","input":{"filePath":"/x"},"error":"File not found: /x"}}}`))
	if s := p.Structured(); s.PermissionDenials != 0 || s.Question != "" {
		t.Errorf("a failed tool read as a denial: %+v", s)
	}
}

// TestRetryAfterAndReset: the provider's retry-after header, which
// opencode honoured in its own retries, becomes the verdict's wait when
// the message names none; an OpenAI usage_limit_reached body's resets_at
// is the reset time.
func TestRetryAfterAndReset(t *testing.T) {
	p := NewParser()
	p.Feed([]byte(`{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Too many requests","statusCode":429,"isRetryable":true,"responseHeaders":{"retry-after":"40"},"responseBody":"{\"error\":{\"message\":\"Too many requests\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}"}}}`))
	s := p.Structured()
	c := policy.Classify(policy.Signals{AgentKind: Kind, ExitCode: 1, Structured: s, Now: time.Unix(1796000000, 0)}, nil)
	if s.RetryDelay != 40*time.Second || c.Kind != policy.KindRateLimited || c.RetryAfter != 40*time.Second {
		t.Errorf("retry delay %v, verdict %s after %v; want 40s, rate_limited after 40s", s.RetryDelay, c.Kind, c.RetryAfter)
	}
	p = NewParser()
	p.Feed([]byte(`{"type":"error","error":{"name":"APIError","data":{"message":"The usage limit has been reached","statusCode":429,"isRetryable":true,"responseBody":"{\"error\":{\"message\":\"The usage limit has been reached\",\"type\":\"usage_limit_reached\",\"code\":\"usage_limit_reached\",\"resets_at\":1796010800}}"}}}`))
	if s := p.Structured(); !s.ResetsAt.Equal(time.Unix(1796010800, 0)) {
		t.Errorf("resets at %v", s.ResetsAt)
	}
}
