package config

import (
	"strings"
	"testing"
)

func TestTemplateStrictAtLoad(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"unknown root", "Hello {{ user.name }}", `unknown variable "user"`},
		{"unknown card field", "{{ card.titel }}", `unknown variable "card.titel" in {{ card.titel }} (did you mean "title"?)`},
		{"unknown issue field", "{{ issue.body }}", `unknown variable "issue.body"`},
		{"in a condition", "{% if card.priorty > 2 %}x{% endif %}", `unknown variable "card.priorty"`},
		{"in a loop", "{% for l in card.lables %}{{ l }}{% endfor %}", `"card.lables"`},
		{"in an else branch", "{% if attempt > 1 %}a{% else %}{{ nope }}{% endif %}", `unknown variable "nope"`},
		{"filter argument", "{{ card.title | append: suffix }}", `unknown variable "suffix"`},
		{"unknown filter", "{{ card.title | shout }}", `unknown filter "shout"`},
		{"unknown filter chained", "{{ card.labels | join: ', ' | frobnicate }}", `unknown filter "frobnicate"`},
		{"syntax", "{% if card.title %}unclosed", "template does not compile"},
		{"unknown tag", "{% render 'x' %}", "template does not compile"},
		{"include", "{% include 'other.md' %}", "include"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("---\n---\n"+tc.body+"\n"), "/x")
			if err == nil {
				t.Fatalf("accepted %q", tc.body)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "prompt") {
				t.Errorf("error %q\nlacks %q", err, tc.want)
			}
		})
	}
}

func TestTemplateAcceptsValid(t *testing.T) {
	body := `{% assign plan = card.spec.plan | default: "none" %}{% capture head %}{{ card.identifier }}{% endcapture %}
{{ head }} {{ plan }} {{ card.title | upcase }} {{ card.labels.size }} {{ run.id }} {{ workspace }}
{% for l in card.labels %}{{ forloop.index }}={{ l }}{% endfor %}
{% case card.state %}{% when "ready" %}r{% else %}o{% endcase %}
{% comment %}{{ anything.goes }}{% endcomment %}{% raw %}{{ not.checked }}{% endraw %}
{{ "a.b | c" }} {{ card.spec.deep.nested | default: 'x' }} {{ issue.description }}`
	cfg, err := Parse([]byte("---\n---\n"+body+"\n"), "/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.RenderPrompt(sampleCard(), 1, "run-1", "/w"); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateErrorLine(t *testing.T) {
	_, err := Parse([]byte("---\nagents: {}\n---\n\nline five\n{{ card.nope }}\n"), "/x")
	e, ok := err.(*Error)
	if !ok || e.Problems[0].Line != 6 || e.Problems[0].Path != "prompt" {
		t.Fatalf("err = %#v", err)
	}
}

func TestRenderBindings(t *testing.T) {
	cfg := mustParse(t, "---\nserver: {port: 4840}\n---\n{{ card.id }}|{{ card.identifier }}|{{ card.title }}|{{ card.state }}|{{ card.priority }}|{{ card.labels | join: ',' }}|{{ card.agent }}|{{ card.spec.plan }}|{{ card.url }}|{{ issue.description }}|{{ attempt }}|{{ run.id }}|{{ workspace }}\n")
	out, err := cfg.RenderPrompt(sampleCard(), 3, "run-9", "/w/DRV-4")
	if err != nil {
		t.Fatal(err)
	}
	want := "c1|DRV-4|Title|ready|2|a,b|sim|ship it|http://127.0.0.1:4840/api/v1/DRV-4|Body text|3|run-9|/w/DRV-4\n"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

func TestTemplateBounds(t *testing.T) {
	for _, body := range []string{
		"{% for i in (1..1000000000) %}{% endfor %}",
		"{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}",
		"{{ (1..99999999999) | join: ',' }}",
	} {
		if _, err := Parse([]byte("---\n---\n"+body), "/x"); err == nil || !strings.Contains(err.Error(), "prompt") {
			t.Errorf("%s: err = %v", body, err)
		}
	}
	cfg := mustParse(t, "---\n---\n{% for i in (1..10000) %}{{ card.body }}{{ card.body }}{{ card.body }}{{ card.body }}{{ card.body }}{% endfor %}")
	card := sampleCard()
	card.Body = strings.Repeat("x", 100)
	_, err := cfg.RenderPrompt(card, 1, "r", "/w")
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized prompt: %v", err)
	}
}
