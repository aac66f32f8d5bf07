package agentcall

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/drover-dev/drover/internal/board"
)

// Limits on what an agent may say, in characters. They keep a card, an
// event and a notification readable; the agent's log keeps anything longer.
const (
	MaxWhat     = 2000
	MaxWhere    = 1000
	MaxHow      = 2000
	MaxQuestion = 4000
	MaxOptions  = 10
	MaxOption   = 200
	MaxComment  = 8000
	MaxProgress = 500
	MaxSummary  = 8000
)

// commentArg is drover_comment's argument.
const commentArg = "text"

// InputError is an argument the agent must fix: it names the argument and
// the fix, and nothing was written. It is the board's input error, so
// `drover run` and the API report it as invalid_input like any other bad
// input (operator.ErrorCode).
type InputError = board.InputError

// text checks one argument: valid UTF-8, not blank when required, within
// max characters, and free of control characters (line breaks and tabs
// only where multiline) and of invisible characters that change how the
// text around them displays. It returns the text trimmed of surrounding
// space.
func text(arg, s string, max int, required, multiline bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", &InputError{Field: arg, Msg: "is not valid UTF-8; send UTF-8 text"}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		if required {
			return "", &InputError{Field: arg, Msg: "is empty; it is required"}
		}
		return "", nil
	}
	if n := utf8.RuneCountInString(s); n > max {
		where := "details can go in drover_comment"
		if arg == commentArg {
			// A comment is where details go: pointing back at it would send
			// the agent round in a circle.
			where = "longer material belongs in a file in the workspace, which the next attempt and the reviewer see"
		}
		return "", &InputError{Field: arg, Msg: fmt.Sprintf("has %d characters; the limit is %d: say it shorter (%s)", n, max, where)}
	}
	for i, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t'):
		case r == '\t':
		case unicode.IsControl(r):
			what := "control characters"
			if r == '\n' || r == '\r' {
				what = "line breaks"
			}
			return "", &InputError{Field: arg, Msg: fmt.Sprintf("has a control character (%U) at byte %d; %s are not allowed here", r, i, what)}
		case invisible(r):
			return "", &InputError{Field: arg, Msg: fmt.Sprintf("has an invisible formatting character (%U) at byte %d; remove it", r, i)}
		}
	}
	return s, nil
}

// invisible reports a character that changes how the text around it
// displays while showing nothing: bidirectional controls, zero-width
// spaces, the byte order mark, line and paragraph separators.
func invisible(r rune) bool {
	switch {
	case r == '\u061C', r == '\u200E', r == '\u200F', r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069',
		r == '\u200B', r == '\u2060', r == '\uFEFF', r == '\u2028', r == '\u2029':
		return true
	}
	return false
}
