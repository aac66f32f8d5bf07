package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"claude", "codex", "command", "sim"}
	cases := map[string]string{"claud": "claude", "Codx": "codex", "comand": "command", "xyz": "", "s": "", "gemini": ""}
	for in, want := range cases {
		if got := Closest(in, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
	if DidYouMean("") != "" || DidYouMean("x") != ` (did you mean "x"?)` {
		t.Error("DidYouMean")
	}
}
