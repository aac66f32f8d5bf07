package prompt

import (
	"encoding/json"
	"testing"
)

// A spec object prints as JSON, not as Go's map syntax, wherever it is
// printed whole; its fields, loops and scalars render as before.
func TestSpecObjectsRenderAsJSON(t *testing.T) {
	card := sampleCard()
	card.Spec = json.RawMessage(`{"plan":"ship <it> & go","n":2,"cfg":{"on":true,"tags":["x","y"]},"steps":[{"do":"a"}]}`)
	for _, c := range []struct{ src, want string }{
		{"{{ card.spec }}", `{"cfg":{"on":true,"tags":["x","y"]},"n":2,"plan":"ship <it> & go","steps":[{"do":"a"}]}`},
		{"{{ card.spec.cfg }}", `{"on":true,"tags":["x","y"]}`},
		{"{{ card.spec.steps[0] }}", `{"do":"a"}`},
		{"{{ card.spec.plan }} {{ card.spec.n }} {{ card.spec.cfg.on }}", "ship <it> & go 2 true"},
		{"{{ card.spec.cfg.tags | join: ',' }} {{ card.spec.cfg.tags.size }}", "x,y 2"},
		{"{% for s in card.spec.steps %}{{ s.do }}{% endfor %}", "a"},
		{"{% if card.spec.cfg.on %}on{% endif %}", "on"},
	} {
		tmpl, probs := problems(c.src)
		if tmpl == nil {
			t.Fatalf("%s: %s", c.src, probs)
		}
		got, err := tmpl.Render(Vars{Card: card})
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got != c.want {
			t.Errorf("%s rendered %q, want %q", c.src, got, c.want)
		}
	}
}
