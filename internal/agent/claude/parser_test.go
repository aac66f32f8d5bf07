package claude

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent/jsonl"
)

func feedFile(t testing.TB, p *Parser, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		p.Feed(sc.Bytes())
	}
}

func TestParserExtractsFields(t *testing.T) {
	p := NewParser()
	feedFile(t, p, "testdata/rate_limit_429/stdout")
	s := p.Structured()
	if !s.Present || !s.Finished || !s.IsError || s.Subtype != "success" || s.APIErrorStatus != 429 ||
		s.ErrorType != "rate_limit" || s.TerminalReason != "completed" || s.Turns != 1 {
		t.Errorf("result fields: %+v", s)
	}
	if s.SessionID != "9705629a-1a9a-421e-bb42-3d8e72519de7" {
		t.Errorf("session %q", s.SessionID)
	}
	if s.Retries != 2 || len(s.RetryStatuses) != 2 || s.RetryStatuses[1] != 429 || s.RetryErrors[1] != "rate_limit" ||
		s.RetryDelay != 2*time.Second {
		t.Errorf("retries: %d %v %v %v", s.Retries, s.RetryStatuses, s.RetryErrors, s.RetryDelay)
	}
	if len(s.ErrorMessages) != 1 || !strings.HasPrefix(s.ErrorMessages[0], "API Error: Request rejected (429)") {
		t.Errorf("errors %q", s.ErrorMessages)
	}
	if !s.CostKnown || s.CostUSD != 0 {
		t.Errorf("cost %v %v", s.CostKnown, s.CostUSD)
	}
}

func TestParserUsageAndCost(t *testing.T) {
	p := NewParser()
	feedFile(t, p, "testdata/success/stdout")
	s := p.Structured()
	if s.TokensIn != 1234 || s.TokensOut != 12 || s.CostUSD != 0.00647 || !s.CostKnown || s.IsError {
		t.Errorf("usage %d/%d cost %v", s.TokensIn, s.TokensOut, s.CostUSD)
	}
	last, in, out, cost := p.Progress()
	if last != "Hi! How can I help you today?" || in != 1234 || out != 12 || cost != 0.00647 {
		t.Errorf("progress %q %d %d %v", last, in, out, cost)
	}
}

func TestParserProgressBeforeResult(t *testing.T) {
	// max_turns: one message id split over two lines (text, then tool_use)
	// counts once.
	p := NewParser()
	b, _ := os.ReadFile("testdata/max_turns/stdout")
	lines := bytes.Split(b, []byte("\n"))
	for _, l := range lines[:3] {
		p.Feed(l)
	}
	last, in, out, _ := p.Progress()
	if last != "→ Bash" || in != 1234 || out != 1 {
		t.Errorf("progress %q %d %d", last, in, out)
	}
	// max_output_tokens: four distinct requests before the result add up.
	p = NewParser()
	b, _ = os.ReadFile("testdata/max_output_tokens/stdout")
	for _, l := range bytes.Split(b, []byte("\n"))[:5] {
		p.Feed(l)
	}
	if _, in, out, _ = p.Progress(); in != 4*1234 || out != 4 {
		t.Errorf("progress tokens %d %d", in, out)
	}
}

func TestParserRateLimitEventAndDenials(t *testing.T) {
	p := NewParser()
	feedFile(t, p, "testdata/usage_limit_subscription/stdout")
	s := p.Structured()
	if s.RateLimitStatus != "rejected" || s.RateLimitType != "five_hour" || !s.ResetsAt.Equal(time.Unix(1795990709, 0)) {
		t.Errorf("rate limit event: %q %q %v", s.RateLimitStatus, s.RateLimitType, s.ResetsAt)
	}
	p = NewParser()
	feedFile(t, p, "testdata/permission_denied_tool--json/stdout")
	s = p.Structured()
	if s.PermissionDenials != 1 || len(s.DeniedTools) != 1 || s.DeniedTools[0] != "Bash" || s.IsError {
		t.Errorf("denials %d %v", s.PermissionDenials, s.DeniedTools)
	}
	p = NewParser()
	feedFile(t, p, "testdata/max_turns/stdout")
	s = p.Structured()
	if s.Subtype != "error_max_turns" || s.ResultText != "" || len(s.ErrorMessages) != 1 || s.ErrorMessages[0] != "Reached maximum number of turns (1)" {
		t.Errorf("max turns: %q %q %q", s.Subtype, s.ResultText, s.ErrorMessages)
	}
}

// TestParserBadLines: garbage and truncated lines are reported, not fatal,
// and the good lines around them still count.
func TestParserBadLines(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "auth_401", "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(good), []byte("\n"))
	last := lines[len(lines)-1]
	p := NewParser()
	p.Feed([]byte("Warning: something printed to stdout"))
	p.Feed(lines[0][:len(lines[0])/2]) // truncated init
	p.Feed([]byte{0xff, 0xfe, '{', '"'})
	p.Feed([]byte(`{"type":"result","num_turns":"three"}`)) // wrong type
	p.Feed([]byte(`[1,2,3]`))
	p.Feed(nil)
	p.Feed(last)
	s := p.Structured()
	if len(s.ParseErrors) != 5 {
		t.Errorf("parse errors %d: %q", len(s.ParseErrors), s.ParseErrors)
	}
	if !s.IsError || s.APIErrorStatus != 401 {
		t.Errorf("the good result line was lost: %+v", s)
	}
	for i := 0; i < 100; i++ {
		p.Feed([]byte("junk"))
	}
	s = p.Structured()
	if len(s.ParseErrors) != jsonl.MaxProblems+1 || !strings.Contains(s.ParseErrors[jsonl.MaxProblems], "more bad lines") {
		t.Errorf("parse errors not bounded: %d", len(s.ParseErrors))
	}
}

func TestDefaultArgs(t *testing.T) {
	got := strings.Join(DefaultArgs(), " ")
	if got != "-p --output-format stream-json --verbose" {
		t.Errorf("DefaultArgs = %q", got)
	}
}

// A denied AskUserQuestion call (print mode) is the run's question; one the
// CLI served (its tool_result is no error) was answered and is not.
func TestParserAskUserQuestion(t *testing.T) {
	call := `{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"tu1","name":"AskUserQuestion","input":{"questions":[{"question":"Which region?","options":[{"label":"eu"},{"label":"us"}]}]}}]}}`
	for _, c := range []struct {
		name, result, want string
	}{
		{"denied", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":"<tool_use_error>Error: No such tool available: AskUserQuestion.</tool_use_error>"}]}}`, "Which region? (options: eu, us)"},
		{"answered", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"eu"}]}}`, ""},
		{"another tool's error", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"other","is_error":true,"content":"x"}]}}`, ""},
	} {
		p := NewParser()
		p.Feed([]byte(call))
		p.Feed([]byte(c.result))
		if got := p.Structured().Question; got != c.want {
			t.Errorf("%s: Question %q, want %q", c.name, got, c.want)
		}
	}
	if got := askedQuestion([]byte(`{"question":"Old shape?"}`)); got != "Old shape?" {
		t.Errorf("old input shape: %q", got)
	}
}

// The window kept is the one that binds the run, as the last event says:
// a rejected window's reset (or the extra usage's, when that is rejected
// too and comes back first); none for a window allowed again, or one the
// run goes on past as extra usage.
func TestParserRateLimitWindowThatBinds(t *testing.T) {
	ev := func(info string) []byte {
		return []byte(`{"type":"rate_limit_event","rate_limit_info":{` + info + `}}`)
	}
	cases := []struct {
		name   string
		events []string
		status string
		resets int64
	}{
		{"rejected", []string{`"status":"rejected","resetsAt":2000000000`}, "rejected", 2000000000},
		{"rejected, overage rejected sooner", []string{`"status":"rejected","resetsAt":2000000000,"overageStatus":"rejected","overageResetsAt":1900000000`}, "rejected", 1900000000},
		{"rejected, overage rejected later", []string{`"status":"rejected","resetsAt":2000000000,"overageStatus":"rejected","overageResetsAt":2100000000`}, "rejected", 2000000000},
		{"rejected, on overage", []string{`"status":"rejected","resetsAt":2000000000,"overageStatus":"allowed","isUsingOverage":true`}, "allowed", 0},
		{"rejected, then allowed again", []string{`"status":"rejected","resetsAt":2000000000`, `"status":"allowed","resetsAt":2000018000`}, "allowed", 0},
		{"allowed", []string{`"status":"allowed_warning","resetsAt":2000000000`}, "allowed_warning", 0},
	}
	for _, c := range cases {
		p := NewParser()
		for _, e := range c.events {
			p.Feed(ev(e))
		}
		s := p.Structured()
		want := time.Time{}
		if c.resets > 0 {
			want = time.Unix(c.resets, 0)
		}
		if s.RateLimitStatus != c.status || !s.ResetsAt.Equal(want) {
			t.Errorf("%s: status %q, resets %v; want %q, %v", c.name, s.RateLimitStatus, s.ResetsAt, c.status, want)
		}
	}
}
