package config

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

func sampleCard() board.Card {
	return board.Card{ID: "c1", Identifier: "DRV-4", Title: "Title", Body: "Body text", State: "ready", Priority: 2,
		Labels: []string{"a", "b"}, Spec: json.RawMessage(`{"plan":"ship it"}`)}
}

// FuzzParse: Parse never panics, and whatever it accepts renders or fails
// with an error (never a panic).
func FuzzParse(f *testing.F) {
	f.Add([]byte(InitTemplate))
	if b, err := os.ReadFile("testdata/symphony.md"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"", "---", "---\n---\n", "---\n---\n{{ card.title }}", "---\n: :\n---\n",
		"---\npolicy: {max_attempts: 0}\n---\n", "---\nboard: {columns: [{name: x}]}\n---\n",
		"---\nagents: {profiles: {a: {kind: command, spec_schema: {$ref: '#/x'}}}}\n---\n",
		"---\na: &a [*a]\n---\n", "---\npolicy: !!binary xyz\n---\n", "---\nstore: {dsn: 'postgres://u:p@h/d'}\n---\n",
		"---\n---\n{% for x in card.labels %}{{ x | plus: 1 }}{% endfor %}{{ card.spec.a.b }}",
		"---\n---\n{{ card.title | date: '%Y' }}{% assign x = 1 %}{{ x }}{% if %}",
		"---\nhooks: {timeout_ms: -1}\ncodex: {command: 'codex app-server', turn_timeout_ms: 99999999999999}\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "/fuzz")
		if err != nil {
			_ = err.Error()
			return
		}
		_ = cfg.String()
		_, _ = cfg.RenderPrompt(sampleCard(), 1, "r", "/w")
		_, _ = cfg.RenderPrompt(board.Card{}, 0, "", "")
	})
}
