package codex

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func feed(t testing.TB, p *Parser, dir string) {
	t.Helper()
	for _, name := range []string{"stdout", "stderr"} {
		b, err := os.ReadFile("testdata/" + dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if name == "stdout" {
				p.Feed(l)
			} else {
				p.FeedStderr(l)
			}
		}
	}
}

func TestParserJSON(t *testing.T) {
	p := NewParser()
	feed(t, p, "rate_limit_then_success")
	s := p.Structured()
	if !s.Present || !s.Finished || s.IsError || s.SessionID != "01a228bc-be13-7551-9aa7-31d12bd2d500" || s.Turns != 1 {
		t.Errorf("fields %+v", s)
	}
	if s.ResultText != "Hi! How can I help you today?" || s.TokensIn != 1234 || s.TokensOut != 12 {
		t.Errorf("result %q tokens %d/%d", s.ResultText, s.TokensIn, s.TokensOut)
	}
	if s.Retries != 1 || len(s.RetryStatuses) != 1 || s.RetryStatuses[0] != 429 || len(s.ErrorMessages) != 0 {
		t.Errorf("retries %d %v errors %q", s.Retries, s.RetryStatuses, s.ErrorMessages)
	}
	last, in, out, cost := p.Progress()
	if last != "Hi! How can I help you today?" || in != 1234 || out != 12 || cost != 0 {
		t.Errorf("progress %q %d %d %v", last, in, out, cost)
	}
}

func TestParserTurnFailed(t *testing.T) {
	p := NewParser()
	feed(t, p, "builtin_provider_missing_api_key")
	s := p.Structured()
	if !s.IsError || s.APIErrorStatus != 401 || s.Retries != 9 || len(s.Warnings) != 1 {
		t.Errorf("status %d retries %d warnings %q", s.APIErrorStatus, s.Retries, s.Warnings)
	}
	if len(s.ErrorMessages) != 1 || !strings.HasPrefix(s.ErrorMessages[0], "unexpected status 401 Unauthorized: You didn't provide an API key") {
		t.Errorf("errors %q (the error event and turn.failed repeat one message)", s.ErrorMessages)
	}
	p = NewParser()
	feed(t, p, "model_not_found")
	s = p.Structured()
	if len(s.Warnings) != 1 || !strings.HasPrefix(s.Warnings[0], "Model metadata for") || s.APIErrorStatus != 0 {
		t.Errorf("warnings %q status %d", s.Warnings, s.APIErrorStatus)
	}
}

func TestParserText(t *testing.T) {
	p := NewParser()
	feed(t, p, "success--text")
	s := p.Structured()
	if s.Present || s.ResultText != "Hi! How can I help you today?" || s.SessionID != "01a228bc-acc5-7d82-af26-d1bd3fab8289" || len(s.ParseErrors) != 0 {
		t.Errorf("text mode: %+v", s)
	}
	p = NewParser()
	feed(t, p, "auth_401--text")
	s = p.Structured()
	if len(s.ErrorMessages) != 1 || !strings.HasPrefix(s.ErrorMessages[0], "unexpected status 401") || s.Retries != 1 {
		t.Errorf("text errors %q retries %d", s.ErrorMessages, s.Retries)
	}
}

func TestParserBadLines(t *testing.T) {
	p := NewParser()
	p.Feed([]byte(`{"type":"thread.started","thread_id":"t1"}`))
	p.Feed([]byte(`{"type":"turn.completed","usage":{"input_tokens":12`)) // truncated
	p.Feed([]byte("plain garbage"))
	p.Feed([]byte(`{"type":"error","message":7}`))
	p.Feed([]byte(`{"type":"item.completed","item":null}`))
	p.Feed([]byte(`{"type":"turn.failed","error":{"message":"unexpected status 403 Forbidden: nope"}}`))
	s := p.Structured()
	if len(s.ParseErrors) != 3 || s.SessionID != "t1" || !s.IsError || s.APIErrorStatus != 403 {
		t.Errorf("parse errors %q, %+v", s.ParseErrors, s)
	}
}

func TestDefaultArgs(t *testing.T) {
	if got := strings.Join(DefaultArgs(), " "); got != "exec --json --skip-git-repo-check" {
		t.Errorf("DefaultArgs = %q", got)
	}
}

// TestSessionFromThreadStarted: the thread id of a real capture is the
// session the attempt after an answer resumes (codex exec resume <id>).
func TestSessionFromThreadStarted(t *testing.T) {
	out, err := os.ReadFile("testdata/success/stdout")
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser()
	for _, l := range bytes.Split(out, []byte("\n")) {
		p.Feed(l)
	}
	if got := p.Structured().SessionID; got != "01a228bc-ab61-7360-b66c-ee18ac039df9" {
		t.Errorf("session %q, want the thread.started thread_id", got)
	}
}
