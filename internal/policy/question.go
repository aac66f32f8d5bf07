package policy

import (
	"regexp"
	"strings"
)

// The question protocol. Claude Code in print mode disables AskUserQuestion
// and codex exec cannot ask at all, so a headless agent that needs a human
// decision has only its final message to say so. drover's default prompt
// (internal/prompt) asks it to end that message with one line
//
//	QUESTION: <the question>
//
// and Classify reads a clean exit whose final message ends so as
// input_required with that question. The line is read only where it cannot
// be prose about something else: the last non-empty line of the final
// message (Structured.ResultText; a command agent's last stdout line),
// anchored at the start of the line, the marker in capitals, and bounded in
// length. A question asked through a structured tool call (Claude's
// AskUserQuestion, Structured.Question) comes first.

// MaxQuestion bounds a question read from the protocol line, in bytes: a
// longer line is not taken for a question.
const MaxQuestion = 2000

// QuestionMarker starts the protocol line.
const QuestionMarker = "QUESTION:"

// questionLineRe is the protocol line, allowing the Markdown emphasis a
// model may wrap the marker in ("**QUESTION:** …").
var questionLineRe = regexp.MustCompile(`^\s*(?:[*_]{1,2})?QUESTION:(?:[*_]{1,2})?[ \t]*(\S.*?)\s*$`)

// QuestionLine returns the question the final message ends with by drover's
// protocol, if it does.
func QuestionLine(final string) (string, bool) {
	line := lastNonEmptyLine(final)
	if line == "" || len(line) > MaxQuestion+len(QuestionMarker)+8 {
		return "", false
	}
	m := questionLineRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	q := strings.TrimSpace(strings.Trim(m[1], "*_"))
	if q == "" || len(q) > MaxQuestion {
		return "", false
	}
	return q, true
}

func lastNonEmptyLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
