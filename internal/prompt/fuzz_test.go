package prompt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
)

// fuzzTemplates are operator templates that use card data every way a
// prompt does: printed, filtered, looped over (also nested), compared.
var fuzzTemplates = []string{
	"",
	"{{ card.identifier }}: {{ card.title }}\n{{ card.body }}\n{{ card.spec.plan | default: 'none' }}",
	"{% for l in card.labels %}[{{ l | upcase }}]{% endfor %}{{ card.labels | join: ', ' }}{{ card.labels.size }}",
	"{% for kv in card.spec %}{{ kv[0] }}={{ kv[1] }};{% endfor %}",
	"{% for a in card.spec.items %}{% for b in card.spec.items %}{{ a }}{{ b }}{% endfor %}{% endfor %}",
	"{% if card.title contains '{{' %}braces{% endif %}{{ card.title | replace: 'a', 'b' | split: ' ' | size }}{{ card.body | strip_html | truncate: 40 }}",
	"{{ issue.title }}\n{{ issue.description | newline_to_br }}{% if attempt > 1 %}again{% endif %}{{ run.id }} {{ workspace }}",
	"{% assign t = card.title | downcase %}{% case t %}{% when 'x' %}x{% else %}{{ t | escape }}{% endcase %}{% for i in (1..3) %}{{ card.spec.items[i] }}{% endfor %}",
}

// FuzzRenderPrompt: a card's title, body, labels, agent and spec are
// operator or tracker input; rendering them through any of the templates
// above never panics, never hangs (loops over card data are bounded), never
// exceeds MaxPromptBytes, fails only with a *RenderError, and prints card
// text literally (a title holding Liquid is not evaluated).
func FuzzRenderPrompt(f *testing.F) {
	f.Add(uint8(1), "Fix the login page", "Steps:\n1. open /login\n", "bug", `{"plan":"ship it"}`)
	f.Add(uint8(1), "{{ card.spec }}", "{% for i in (1..1000000000) %}x{% endfor %}", "x", `{"plan":"{{ card.body }}"}`)
	f.Add(uint8(4), "t", "b", "l", `{"items":[`+strings.Repeat("1,", 2000)+`1]}`)
	f.Add(uint8(3), "../../etc/passwd", "$(touch /tmp/CANARY) `id`", "a", `{"a":{"b":{"c":[[[[{}]]]]}}}`)
	f.Add(uint8(2), "\xff\xfe invalid", "nul\x00byte", "rtl\u202e", `{"n":1e308,"m":-99999999999999999999999}`)
	f.Fuzz(func(t *testing.T, which uint8, title, body, label, spec string) {
		tpl := fuzzTemplates[int(which)%len(fuzzTemplates)]
		src := tpl
		if strings.TrimSpace(src) == "" {
			src = DefaultPrompt // what a WORKFLOW.md without a body runs on
		}
		tmpl, probs := Compile(src, 3)
		if len(probs) > 0 {
			t.Fatalf("template %q: %v", tpl, probs)
		}
		card := board.Card{ID: "c1", Identifier: "DRV-1", Title: title, Body: body, State: "ready", Priority: 2,
			Labels: []string{label, label + label}, Agent: label, Spec: json.RawMessage(spec)}
		start := time.Now()
		out, err := tmpl.Render(Vars{Card: card, Attempt: 2, RunID: "run-1", Workspace: "/w/DRV-1", Agent: label})
		if d := time.Since(start); d > MaxRenderTime+5*time.Second {
			t.Fatalf("render took %v", d)
		}
		if err != nil {
			var re *RenderError
			if !errors.As(err, &re) {
				t.Fatalf("error is %T, not *RenderError: %v", err, err)
			}
			if re.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(out) > MaxPromptBytes {
			t.Fatalf("prompt of %d bytes", len(out))
		}
		if tpl == fuzzTemplates[1] && !strings.Contains(out, title) {
			t.Fatalf("title %q not printed literally in %q", title, out)
		}
		if tpl == fuzzTemplates[1] && utf8.ValidString(body) && !strings.Contains(out, body) {
			t.Fatalf("body %q not printed literally", body)
		}
	})
}
