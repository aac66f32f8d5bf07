package excerpt

import "testing"

func TestClip(t *testing.T) {
	for _, c := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"short stays", "hello", 10, "hello"},
		{"exact length stays", "hello", 5, "hello"},
		{"one over is cut to n runes", "hello!", 5, "hell…"},
		{"empty", "", 3, ""},
		{"zero bound", "hello", 0, ""},
		{"negative bound", "hello", -1, ""},
		{"bound of one is the ellipsis", "hello", 1, "…"},
		{"multi-byte runes count once", "héllo wörld", 11, "héllo wörld"},
		{"multi-byte cut on a rune boundary", "日本語のテキスト", 4, "日本語…"},
		{"emoji", "👍👍👍👍", 3, "👍👍…"},
		{"whitespace is kept", "a\n b\tc", 6, "a\n b\tc"},
		{"invalid bytes are kept when short", "a\xffb", 3, "a\xffb"},
		{"invalid bytes count as one rune each", "\xff\xfe\xfdabc", 4, "\xff\xfe\xfd…"},
		{"cut does not split a rune after an invalid byte", "\xffé\xffé", 3, "\xffé…"},
		{"truncated rune at the end", "ab\xe6\x97", 3, "ab…"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("%s: Clip(%q, %d) = %q, want %q", c.name, c.in, c.n, got, c.want)
		}
	}
}

func TestFlatten(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "",
		"  \n\t ":              "",
		"one":                  "one",
		"  two  words \n":      "two words",
		"line one\nline two":   "line one line two",
		"a\r\n\r\nb\t\tc":      "a b c",
		"non\u00a0breaking ok": "non breaking ok",
		"bad \xff byte":        "bad \xff byte",
	} {
		if got := Flatten(in); got != want {
			t.Errorf("Flatten(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLastLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 10, ""},
		{"only line", 20, "only line"},
		{"first\nsecond\n\n  \t\n", 20, "second"},
		{"  a\r\n  last one  ", 20, "last one"},
		{"a\nthe last line is long", 8, "the las…"},
		{"x\nünïcödé tail", 8, "ünïcödé…"},
	} {
		if got := LastLine(c.in, c.n); got != c.want {
			t.Errorf("LastLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"error:\n  disk full\n", 40, "error: disk full"},
		{"first\nsecond\nthird", 10, "first sec…"},
		{"   ", 5, ""},
		{"ünïcödé\n\nwörds", 9, "ünïcödé …"},
	} {
		if got := Line(c.in, c.n); got != c.want {
			t.Errorf("Line(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
