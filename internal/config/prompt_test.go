package config

import "testing"

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
