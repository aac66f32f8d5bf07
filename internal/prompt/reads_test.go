package prompt

import "testing"

func TestReadsComments(t *testing.T) {
	for src, want := range map[string]bool{
		DefaultPrompt:         true,
		"{{ card.title }}":    false,
		"{{ comments.size }}": true,
		"{% for c in comments %}{{ c.text }}{% endfor %}":                true,
		"{{ card.title | append: comments.first.text | default: \"\" }}": true,
	} {
		tmpl, probs := Compile(src, 0)
		if len(probs) > 0 {
			t.Fatalf("%q: %v", src, probs)
		}
		if got := tmpl.ReadsComments(); got != want {
			t.Errorf("ReadsComments(%q) = %v, want %v", src, got, want)
		}
	}
	if !(*Template)(nil).ReadsComments() {
		t.Error("a missing template must be assumed to read comments")
	}
}
