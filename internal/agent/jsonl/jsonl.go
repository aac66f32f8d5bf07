// Package jsonl reads the JSON-lines event streams agent CLIs print (Claude
// Code's stream-json, Codex's exec --json, Gemini CLI's stream-json,
// opencode's --format json): one event a line, where a line that is not an
// event is recorded, bounded, and never fatal. Each kind's parser decides
// what its events mean; this package only holds what they share.
package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

// MaxProblems bounds how many bad lines are kept verbatim; the count of the
// rest goes on.
const MaxProblems = 20

// Decode decodes one trimmed line into ev. ok is false for a blank line
// (why is "") and for a line that is not a JSON event (why says what is
// wrong with it).
func Decode(line []byte, ev any) (ok bool, why string) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false, ""
	}
	if line[0] != '{' {
		return false, "not a JSON event"
	}
	if err := json.Unmarshal(line, ev); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// Start is how a JSON-lines parser's Feed begins: it decodes line into ev;
// a line that is not an event is recorded in bad and Start returns false.
// An event marks s as structured output and carries the session id it
// names (session reads it from the decoded event) into s.
func Start(bad *Problems, s *policy.Structured, line []byte, ev any, session func() string) bool {
	ok, why := Decode(line, ev)
	if !ok {
		if why != "" {
			bad.Add(why, bytes.TrimSpace(line))
		}
		return false
	}
	s.Present = true
	if id := session(); id != "" {
		s.SessionID = id
	}
	return true
}

// MaxErrors bounds how many error texts a parser keeps.
const MaxErrors = 100

// AddError appends the error text t, trimmed, to msgs unless it is empty or
// repeats the last one, keeping at most MaxErrors. It returns t trimmed
// ("" for an empty text), for the parser's live view.
func AddError(msgs *[]string, t string) string {
	t = strings.TrimSpace(t)
	if t == "" {
		return ""
	}
	if n := len(*msgs); (n == 0 || (*msgs)[n-1] != t) && n < MaxErrors {
		*msgs = append(*msgs, t)
	}
	return t
}

// Recover, deferred first in a parser's Feed, records a panic while reading
// line as a bad line: bad input must never kill a run.
func (p *Problems) Recover(line []byte) {
	if r := recover(); r != nil {
		p.Add(fmt.Sprintf("parser panic: %v", r), line)
	}
}

// Problems records the lines a parser could not read: the first MaxProblems
// with the line (clipped) and why, then how many more.
type Problems struct {
	kept []string
	n    int
}

// Add records one bad line.
func (p *Problems) Add(why string, line []byte) {
	p.n++
	if len(p.kept) < MaxProblems {
		p.kept = append(p.kept, fmt.Sprintf("line %q: %s", excerpt.Clip(string(line), 120), why))
	}
}

// List returns a copy of what was recorded, ending with "… N more bad
// lines" when some were not kept; nil when every line was read.
func (p *Problems) List() []string {
	out := append([]string(nil), p.kept...)
	if p.n > len(p.kept) {
		out = append(out, fmt.Sprintf("… %d more bad lines", p.n-len(p.kept)))
	}
	return out
}
