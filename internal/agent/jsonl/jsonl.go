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

	"github.com/drover-dev/drover/internal/excerpt"
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
