package policy

import (
	"testing"
	"time"
)

// FuzzClassify: any text, exit code and typed status gives a valid kind
// without panicking, and Classify is deterministic. Seeds are the phrase
// table's cited messages.
func FuzzClassify(f *testing.F) {
	for i, p := range Phrases {
		f.Add(p.Cite, 1, 0, "", i%2 == 0)
	}
	f.Add("", 0, 0, "", false)
	f.Add("API Error: 405 status code (no body)", 1, 0, "", false) // once no kind at all
	f.Add("HTTP 409 Conflict", 1, 409, "", true)
	f.Add("You've hit your session limit · resets 10:18pm (UTC)", 1, 429, "rate_limit", true)
	f.Add("resets 99:99pm (Mars/Olympus)", 1, 429, "rate_limit", true)
	f.Add("try again in 1e308 seconds retry-after: 99999999999", 1, 429, "", true)
	now := time.Date(2026, 11, 29, 19, 16, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string, exit, status int, errType string, structured bool) {
		s := Signals{AgentKind: "command", ExitCode: exit, Stderr: text, Stdout: text, Now: now}
		if structured {
			s.Structured = Structured{Present: true, IsError: exit != 0, APIErrorStatus: status,
				ErrorType: errType, ErrorMessages: []string{text}}
		}
		rules := []Rule{{Name: "r", Regex: text, Kind: KindRefused}}
		c := Classify(s, rules)
		if c.Kind != KindSucceeded && !c.Kind.Valid() {
			t.Fatalf("invalid kind %q", c.Kind)
		}
		if c.Source == "" {
			t.Fatal("no source")
		}
		if c.RetryAfter < 0 {
			t.Fatalf("negative retry-after %v", c.RetryAfter)
		}
		if c2 := Classify(s, rules); c2 != c {
			t.Fatalf("not deterministic: %+v vs %+v", c, c2)
		}
	})
}
