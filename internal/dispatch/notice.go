package dispatch

import (
	"encoding/json"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/workspace"
)

// Notice is a notification the dispatcher wants delivered; Options.Outbox
// turns it into outbox rows in the routing transaction.
type Notice struct {
	Event    string
	Key      string // card/run/event: one message per (card, run, outcome)
	Card     board.Card
	Run      *board.Run
	Reason   *board.BlockReason
	GaveUp   *board.GaveUp
	Profile  string
	Question string
	Text     string
	At       time.Time
}

// safeName is the card's directory name for logs (the workspace rules).
func safeName(ident string) string {
	n, err := workspace.Name(ident)
	if err != nil {
		return "_"
	}
	return n
}

var printer = message.NewPrinter(language.English)

// schemaProblems validates a spec against a profile's JSON schema and
// returns "field.path: what it should be" lines.
func schemaProblems(sch *jsonschema.Schema, spec json.RawMessage) []string {
	var v any
	if err := json.Unmarshal(spec, &v); err != nil {
		return []string{"spec: not JSON: " + err.Error()}
	}
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{"spec: " + err.Error()}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			path := "spec"
			for _, p := range e.InstanceLocation {
				path += "." + p
			}
			out = append(out, path+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}
