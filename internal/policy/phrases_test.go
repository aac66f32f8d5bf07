package policy

import (
	"strings"
	"testing"
)

// TestPhraseRows feeds each row's cited message to Classify, as the error
// text of a failed run without structured output, and expects that row to
// decide the kind. One subtest per row.
func TestPhraseRows(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Phrases {
		t.Run(p.Name, func(t *testing.T) {
			if seen[p.Name] {
				t.Fatalf("duplicate row name %q", p.Name)
			}
			seen[p.Name] = true
			if p.Cite == "" {
				t.Fatal("row cites no message")
			}
			if !p.Kind.Valid() {
				t.Fatalf("kind %q is not a failure kind", p.Kind)
			}
			c := Classify(Signals{AgentKind: "command", ExitCode: 1, Stderr: p.Cite}, nil)
			if c.Kind != p.Kind || !strings.HasSuffix(c.Source, "phrase:"+p.Name) {
				t.Errorf("cite %q → %s (%s); want %s (phrase:%s)", p.Cite, c.Kind, c.Source, p.Kind, p.Name)
			}
		})
	}
}

// TestPhrasesNeedAFailure: an agent that exits 0 and talks about rate
// limits in its answer has succeeded.
func TestPhrasesNeedAFailure(t *testing.T) {
	for _, p := range Phrases {
		c := Classify(Signals{AgentKind: "command", ExitCode: 0, Stdout: p.Cite}, nil)
		if c.Kind != KindSucceeded {
			t.Errorf("exit 0 with %q → %s; want succeeded", p.Cite, c.Kind)
		}
	}
}

// A message a terminal or a log wrapped over lines still meets its phrase
// family: the rows match the text with its white space made one space.
func TestPhraseSurvivesWrapping(t *testing.T) {
	cases := []struct {
		text string
		want Kind
	}{
		{"Error: \"message\": \"Resource\nhas been exhausted (e.g. check quota).\"", KindRateLimited},
		{`{\n  "error": "Your credit balance is\n too low"}`, KindQuotaExhausted},
		{"the request was fine\nall tests passed", KindUnknown},
	}
	for _, c := range cases {
		got := Classify(Signals{AgentKind: "command", ExitCode: 1, Stderr: c.text}, nil)
		if got.Kind != c.want {
			t.Errorf("%q → %s (%s); want %s", c.text, got.Kind, got.Source, c.want)
		}
	}
}

// Name resolution and TLS failures in the fixed words of the libraries that
// print them are network (the errno table or the transport row), whatever the CLI around them: Go's
// net ("lookup HOST: no such host", net/http "TLS handshake timeout"),
// Rust's std ("failed to lookup address information") and glibc's
// gai_strerror (EAI_NONAME "Name or service not known", EAI_AGAIN
// "Temporary failure in name resolution").
func TestTransportLibraryWords(t *testing.T) {
	for _, text := range []string{
		`Post "https://api.openai.com/v1/responses": dial tcp: lookup api.openai.com: no such host`,
		"dns error: failed to lookup address information: Name or service not known",
		"proxy: Temporary failure in name resolution",
		`Post "https://generativelanguage.googleapis.com/v1beta": net/http: TLS handshake timeout`,
	} {
		c := Classify(Signals{AgentKind: "claude", ExitCode: 1, Stderr: text}, nil)
		if c.Kind != KindNetwork || !(strings.HasSuffix(c.Source, "phrase:transport") || strings.HasPrefix(c.Source, "text:errno=")) {
			t.Errorf("%q → %s (%s); want network (phrase:transport or text:errno)", text, c.Kind, c.Source)
		}
	}
}
