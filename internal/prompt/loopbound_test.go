package prompt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Loops whose length the card decides end with a RenderError, quickly,
// instead of hanging the dispatcher.
func TestRenderBoundsCardDrivenLoops(t *testing.T) {
	big := "[" + strings.Repeat("1,", 20000) + "1]"
	keys := make([]string, 0, 3000)
	for i := 0; i < 3000; i++ {
		keys = append(keys, `"k`+strings.Repeat("x", i%7)+string(rune('a'+i%26))+`_`+time.Duration(i).String()+`":1`)
	}
	spec := `{"n": 100000000, "arr": ` + big + `, "m": {` + strings.Join(keys, ",") + `}}`
	labels := make([]string, 5000)
	for i := range labels {
		labels[i] = "l"
	}
	card := board.Card{Title: "t", Priority: 1 << 40, Labels: labels, Spec: json.RawMessage(spec)}
	for _, tpl := range []string{
		"{% for i in (1..card.priority) %}{% endfor %}x",
		"{% for i in (1..card.spec.n) %}{% endfor %}x",
		"{% for a in card.spec.arr %}{% for b in card.spec.arr %}{% endfor %}{% endfor %}x",
		"{% for a in card.labels %}{% for b in card.labels -%}{%- endfor %}{% endfor %}x",
		"{% for a in card.spec.m %}{% for b in card.spec.m %}{% endfor %}{% endfor %}x",
		"{% tablerow a in card.spec.arr %}{% for b in card.spec.arr %}{% endfor %}{% endtablerow %}x",
	} {
		tmpl, probs := Compile(tpl, 3)
		if len(probs) > 0 {
			t.Fatalf("%s: %v", tpl, probs)
		}
		start := time.Now()
		_, err := tmpl.Render(Vars{Card: card, Attempt: 1, RunID: "r", Workspace: "/w"})
		if d := time.Since(start); d > MaxRenderTime+2*time.Second {
			t.Errorf("%s: took %v", tpl, d)
		}
		var re *RenderError
		if err == nil || !errorsAs(err, &re) || !strings.Contains(err.Error(), "for this card") && !strings.Contains(err.Error(), "convert") {
			t.Errorf("%s: want a RenderError about the loop, got %v", tpl, err)
		}
	}
}

// The loop tick changes nothing a template prints: trims, raw blocks,
// comments, else clauses and nested loops render as they do without it.
func TestLoopTickIsInvisible(t *testing.T) {
	card := board.Card{Title: "T", Labels: []string{"a", "b", "c"}, Spec: json.RawMessage(`{"xs":[1,2],"e":[]}`)}
	for _, tpl := range []string{
		"{% for l in card.labels %}[{{ l }}]{% endfor %}",
		"{% for l in card.labels -%}\n   {{ l }}\n{%- endfor %}|",
		"{%- for l in card.labels reversed limit:2 -%}\n {{ forloop.index }}{{ l }} \n{%- endfor -%}\n|",
		"{% raw %}{% for x in y %}{{ x }}{% endfor %}{% endraw %}",
		"{% comment %}{% for x in y %}{% endcomment %}ok",
		"{% for x in card.spec.e %}{{ x }}{% else %}empty{% endfor %}",
		"{% for x in card.spec.xs %}{% for l in card.labels %}{% if l == 'b' %}{% break %}{% endif %}{{ x }}{{ l }}{% endfor %}{% endfor %}",
		"{% tablerow l in card.labels cols:2 %}{{ l }}{% endtablerow %}",
		"{% for i in (1..3) %}{% cycle 'x', 'y' %}{% continue %}z{% endfor %}",
		"{{ '{% for x in y %}' }}{% for l in card.labels %}{{ \"{% for %}\" | append: l }}{% endfor %}",
	} {
		v := Vars{Card: card, Attempt: 1, RunID: "r", Workspace: "/w"}
		tmpl, probs := Compile(tpl, 3)
		if len(probs) > 0 {
			t.Fatalf("%s: %v", tpl, probs)
		}
		got, err := tmpl.Render(v)
		if err != nil {
			t.Fatalf("%s: %v", tpl, err)
		}
		vars, _ := bindings(v)
		want, serr := newEngine().ParseAndRenderString(tpl, vars)
		if serr != nil {
			t.Fatalf("%s: plain render: %v", tpl, serr)
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", tpl, got, want)
		}
	}
}

func errorsAs(err error, re **RenderError) bool {
	r, ok := err.(*RenderError)
	if ok {
		*re = r
	}
	return ok
}
