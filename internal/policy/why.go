package policy

import (
	"fmt"
	"strings"
)

// Why says which signal decided a classification: drover classify --explain
// prints it. It is read back from Classification.Source.
type Why struct {
	// By is the deciding signal: rule, killed, structured, status, type,
	// errno, protocol (the QUESTION: line), phrase, exit_code, exit0 (a
	// clean exit with error text nothing recognised) or fallback (nothing
	// recognised the text).
	By     string `json:"by"`
	Detail string `json:"detail,omitempty"` // the rule, field, status, type, errno or exit code
	// Phrase is the phrase row (its rule id) that decided or narrowed the
	// kind, and Evidence the corpus ids and fixtures that row cites.
	Phrase   string   `json:"phrase,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Words    string   `json:"words"`
}

// Explain reads c.Source back into which signal decided c and why.
func Explain(c Classification) Why {
	parts := strings.Split(c.Source, ",")
	head, rest := parts[0], parts[1:]
	var w Why
	kind, detail, _ := strings.Cut(head, ":")
	switch kind {
	case "rule":
		w = Why{By: "rule", Detail: detail, Words: fmt.Sprintf("the profile's own match rule %q (agents.profiles.*.match in WORKFLOW.md)", detail)}
	case "killed":
		w = Why{By: "killed", Detail: detail, Words: fmt.Sprintf("drover stopped the process itself (%s)", detail)}
	case "structured":
		w = Why{By: "structured", Detail: detail, Words: fmt.Sprintf("a typed field of the agent's structured output (%s)", detail)}
	case "text":
		name, val, _ := strings.Cut(detail, "=")
		w = Why{By: name, Detail: val}
		switch name {
		case "status":
			w.Words = fmt.Sprintf("the HTTP status %s in the error text", val)
		case "type":
			w.Words = fmt.Sprintf("the error type, code, gRPC status or library error class %s in the error text", val)
		case "errno":
			w.Words = fmt.Sprintf("the errno or system error %q in the error text", val)
			if t, ok := earliest(val, errnoRows, "errno"); ok && t.fam.name == famNetwork.name {
				w.Words += ": the request never got an answer from a server"
			}
		}
	case "protocol":
		w = Why{By: "protocol", Detail: detail, Words: "the agent's final message ends with drover's QUESTION: line (the question protocol the default prompt asks for)"}
	case "phrase":
		w = Why{By: "phrase", Words: "a phrase family of the built-in table"}
		rest = parts
	case "exit0":
		w = Why{By: "exit0", Detail: detail, Words: "the agent exited 0 with error text and no final message, and nothing recognised the text: unknown, which counts toward max_attempts"}
		rest = nil
	case "exit_code", "signal":
		if c.Kind == KindUnknown {
			w = Why{By: "fallback", Detail: detail, Words: "nothing recognised the error text: unknown, which counts toward max_attempts (add a match rule to the profile if this recurs)"}
		} else {
			w = Why{By: "exit_code", Detail: detail, Words: "the exit code, with no error text to read"}
			if kind == "signal" {
				w.Words = "a signal drover did not send, with no error text to read"
			}
		}
	default:
		w = Why{By: kind, Detail: detail, Words: "source " + c.Source}
	}
	for _, p := range rest {
		if what, ok := strings.CutPrefix(p, "overruled:"); ok {
			w.Words += fmt.Sprintf(" (the status wins over %s beside it, whose kind is not in the status's family)", strings.Replace(what, "=", " ", 1))
		}
		if p == "exit0:error_text" {
			w.Words += " (the agent exited 0, but with error text and no final message)"
		}
		if name, ok := strings.CutPrefix(p, "phrase:"); ok {
			w.Phrase = name
			for _, row := range Phrases {
				if row.Name == name {
					w.Evidence = row.Evidence
				}
			}
			if w.By == "phrase" {
				w.Words = fmt.Sprintf("the phrase family %s", name)
			} else {
				w.Words += fmt.Sprintf(", narrowed to %s by the phrase family %s", c.Kind, name)
			}
		}
	}
	return w
}
