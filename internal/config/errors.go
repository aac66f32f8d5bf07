package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a config file: the key path at fault, the
// line it is on (0 when unknown) and a message that says how to fix it.
type Problem struct {
	Line int    `json:"line,omitempty"`
	Path string `json:"path"`
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Error is an invalid config: every problem found, in file order.
type Error struct {
	File     string
	Problems []Problem
}

// Error renders the problems on one line, each naming its key path.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == 0 && e.File != "" {
			b.WriteString(e.File)
			if p.Line > 0 {
				fmt.Fprintf(&b, ":%d", p.Line)
			}
			b.WriteString(": ")
		} else if p.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", p.Line)
		}
		b.WriteString(p.String())
	}
	return b.String()
}
