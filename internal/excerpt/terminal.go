package excerpt

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Replacement stands in for a control character Terminal cannot show.
const Replacement = "\uFFFD"

// Terminal makes text that came from an agent (or anyone but the operator)
// safe to print on a terminal, where it is shown and never obeyed: escape
// sequences (CSI such as ESC [ 2 J, OSC such as ESC ] 0 ; title BEL, DCS,
// SOS, PM, APC, and two-byte escapes), in their 7-bit and C1 forms, are
// removed; every other C0 or C1 control character, DEL and the Unicode
// bidirectional controls become Replacement; a lone carriage return becomes
// a newline (CR LF stays one newline); newlines and tabs stay; invalid UTF-8
// becomes Replacement. Plain text comes back unchanged. The stored text (a
// run's log, a card's comment) is never changed: this is for display only.
func Terminal(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(Replacement)
		case r == 0x1b:
			size = escapeLen(s[i:])
		case r >= 0x80 && r <= 0x9f:
			if n := c1Len(s[i:], r, size); n > 0 {
				size = n
			} else {
				b.WriteString(Replacement)
			}
		case r == '\r':
			if !strings.HasPrefix(s[i+1:], "\n") {
				b.WriteByte('\n')
			}
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || bidiControl(r):
			b.WriteString(Replacement)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// plain reports whether Terminal would return s unchanged.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			return plainUnicode(s[i:])
		}
	}
	return true
}

func plainUnicode(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || bidiControl(r) {
			return false
		}
	}
	return true
}

// bidiControl reports whether r is one of Unicode's bidirectional formatting
// characters, which reorder the text around them on screen.
func bidiControl(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069'
}

// escapeLen is the length of the escape sequence at the start of s (s[0] is
// ESC). A string sequence (OSC, DCS, SOS, PM, APC) without its terminator
// counts as its two-byte introducer only, so the text after it still shows.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', 'X', '^', '_':
		return 2 + stringLen(s[2:], s[1] == ']')
	}
	// nF escapes: intermediates 0x20-0x2F, then one final byte 0x30-0x7E.
	n := 1
	for n < len(s) && s[n] >= 0x20 && s[n] <= 0x2f {
		n++
	}
	if n < len(s) && s[n] >= 0x30 && s[n] <= 0x7e {
		n++
	}
	return n
}

// c1Len is the length of the sequence a C1 introducer r (size bytes) starts
// at s, or 0 when r is a C1 control that introduces nothing.
func c1Len(s string, r rune, size int) int {
	switch r {
	case 0x9b: // CSI
		return size + csiLen(s[size:])
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return size + stringLen(s[size:], r == 0x9d)
	}
	return 0
}

// csiLen is the length of a CSI sequence's body: parameter bytes 0x30-0x3F,
// intermediate bytes 0x20-0x2F, then a final byte 0x40-0x7E.
func csiLen(s string) int {
	n := 0
	for n < len(s) && s[n] >= 0x20 && s[n] <= 0x3f {
		n++
	}
	if n < len(s) && s[n] >= 0x40 && s[n] <= 0x7e {
		n++
	}
	return n
}

// stringLen is the length of a string sequence's body up to and including
// its terminator: ST (ESC \ or U+009C), or BEL for OSC. Without one it is 0.
func stringLen(s string, bel bool) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0x07 && bel:
			return i + 1
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
	}
	return 0
}

// TerminalWriter passes everything written to it through Terminal. A rune
// split across two writes is kept until the next write completes it.
type TerminalWriter struct {
	w     io.Writer
	carry []byte
}

// NewTerminalWriter returns a TerminalWriter writing to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

// Write implements io.Writer; it reports len(p) when w took the result.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	buf := append(t.carry, p...)
	t.carry = nil
	// Keep an incomplete rune at the end for the next write.
	for k := 1; k <= 3 && k <= len(buf); k++ {
		if c := buf[len(buf)-k]; c >= 0xc0 {
			if !utf8.FullRune(buf[len(buf)-k:]) {
				t.carry = append([]byte(nil), buf[len(buf)-k:]...)
				buf = buf[:len(buf)-k]
			}
			break
		} else if c < 0x80 {
			break
		}
	}
	if _, err := io.WriteString(t.w, Terminal(string(buf))); err != nil {
		return 0, err
	}
	return len(p), nil
}
