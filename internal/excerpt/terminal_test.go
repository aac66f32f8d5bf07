package excerpt

import (
	"bytes"
	"strings"
	"testing"
)

func TestTerminal(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, ünïcode, 日本語\tand tabs\n", "plain text, ünïcode, 日本語\tand tabs\n"},
		{"title\x1b]0;pwned\x07 after", "title after"},
		{"title\x1b]0;pwned\x1b\\ after", "title after"},
		{"clear\x1b[2Jscreen", "clearscreen"},
		{"\x1b[1;31mred\x1b[0m", "red"},
		{"cursor\x1b[?25l hidden", "cursor hidden"},
		{"dcs\x1bPq#0;2;0;0;0\x1b\\ done", "dcs done"},
		{"apc\x1b_payload\x1b\\ done", "apc done"},
		{"charset\x1b(B ok", "charset ok"},
		{"keypad\x1b= ok", "keypad ok"},
		{"unterminated\x1b]0;rest of the text", "unterminated0;rest of the text"},
		{"trailing escape\x1b", "trailing escape"},
		{"c1 csi\u009b2J clear", "c1 csi clear"},
		{"c1 osc\u009d0;x\u009c end", "c1 osc end"},
		{"bell\x07 nul\x00 bs\x08 del\x7f nel\u0085", "bell\uFFFD nul\uFFFD bs\uFFFD del\uFFFD nel\uFFFD"},
		{"crlf\r\nline", "crlf\nline"},
		{"progress 10%\rprogress 20%", "progress 10%\nprogress 20%"},
		{"rlo\u202Etxt.exe", "rlo\uFFFDtxt.exe"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		if got := Terminal(c.in); got != c.want {
			t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Whatever the input, nothing a terminal obeys comes out.
func FuzzTerminal(f *testing.F) {
	f.Add("\x1b]0;x\x07\x1b[2J\u009b31m\r\x00")
	f.Fuzz(func(t *testing.T, s string) {
		out := Terminal(s)
		if bad := hostileRune(out); bad >= 0 {
			t.Fatalf("Terminal(%q) = %q keeps %U", s, out, bad)
		}
		if Terminal(out) != out {
			t.Fatalf("Terminal is not idempotent on %q", s)
		}
	})
}

// hostileRune is the first rune of s a terminal would obey, or -1.
func hostileRune(s string) rune {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || bidiControl(r) {
			return r
		}
	}
	return -1
}

func TestTerminalWriterKeepsSplitRunes(t *testing.T) {
	var b bytes.Buffer
	w := NewTerminalWriter(&b)
	in := "日本語 \x1b[2J ok é"
	for i := 0; i < len(in); i++ {
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); strings.ContainsRune(got, 0x1b) || !strings.HasPrefix(got, "日本語 ") || !strings.HasSuffix(got, " ok é") {
		t.Fatalf("byte by byte: %q", got)
	}
}
