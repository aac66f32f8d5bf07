package sqlstore

import (
	"strings"
	"unicode/utf8"
)

// The store keeps text that agents wrote (a run's error and last output, a
// parked card's question, an agent's comment) and agents write any bytes.
// PostgreSQL refuses a text parameter that is not UTF-8 or holds a NUL
// (SQLSTATE 22021), which failed the whole transaction: one agent printing
// a stray byte on its QUESTION: line made every tick fail. SQLite keeps the
// bytes but readers then see them differently per backend. So every string
// a write binds is made valid UTF-8 first, the same on both backends: each
// run of invalid bytes and each NUL becomes U+FFFD.

// cleanText is s as valid UTF-8 without NUL.
func cleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// textArgs cleans the string arguments of a write in place and returns them.
func textArgs(args []any) []any {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = cleanText(s)
		}
	}
	return args
}
