// Package excerpt shortens text for display: a card's row in a table, a
// block reason, a notification, an agent's last line. The whole text stays
// where it was stored (the run, its log); an excerpt is only what is shown.
package excerpt

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where Clip cut the text.
const Ellipsis = "…"

// Clip returns s unchanged if it has at most n runes; otherwise its first
// n-1 runes followed by Ellipsis, so the result is n runes long. It cuts on
// a rune boundary; an invalid byte counts as one rune and is kept as it is.
// Clip returns "" when n < 1.
func Clip(s string, n int) string {
	if n < 1 {
		return ""
	}
	if len(s) <= n { // fewer bytes than n means fewer runes too
		return s
	}
	runes, cut := 0, 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		runes++
		if runes == n {
			cut = i
		}
		i += size
		if runes > n {
			return s[:cut] + Ellipsis
		}
	}
	return s
}

// Flatten puts s on one line: every run of whitespace (newlines, tabs,
// spaces) becomes one space, and leading and trailing whitespace goes.
func Flatten(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// LastLine is the last line of s with text, without its surrounding
// whitespace, clipped to n runes: what a program said last.
func LastLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return Clip(s, n)
}

// Line is Flatten then Clip: s on one line, at most n runes.
func Line(s string, n int) string {
	return Clip(Flatten(s), n)
}
