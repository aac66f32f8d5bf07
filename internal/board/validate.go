package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode"
	"unicode/utf8"
)

// Limits on card input. Each is enforced with an error naming the field.
const (
	MaxTitle    = 500     // characters
	MaxBody     = 1 << 20 // bytes
	MaxSpec     = 256 << 10
	MaxLabels   = 50
	MaxLabelLen = 64
	MaxSpecNest = 32
)

// InputError is a bad value in a named field. Callers map it to exit code 2 or
// HTTP 400; the message names the field and the fix.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

func inputErr(field, format string, a ...any) error {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

var agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// ValidateTitle checks a title.
func ValidateTitle(t string) error {
	switch {
	case !utf8.ValidString(t):
		return inputErr("title", "is not valid UTF-8; re-encode it as UTF-8")
	case len(bytes.TrimSpace([]byte(t))) == 0:
		return inputErr("title", "is empty; give the card a short title")
	case utf8.RuneCountInString(t) > MaxTitle:
		return inputErr("title", "has %d characters; the limit is %d (put details in the body)", utf8.RuneCountInString(t), MaxTitle)
	}
	for i, r := range t {
		if unicode.IsControl(r) {
			return inputErr("title", "has a control character (%U) at byte %d; titles are one line of text", r, i)
		}
		if hidden(r) {
			return inputErr("title", "has an invisible formatting character (%U) at byte %d; it can make the title display as something else: remove it", r, i)
		}
	}
	return nil
}

// hidden reports whether r changes how the text around it displays while
// showing nothing itself: the Unicode bidirectional controls (a
// right-to-left override can make "gnp.exe" read "exe.png"), zero-width
// spaces and joiners that split words invisibly, the byte order mark, and
// the line and paragraph separators. Zero-width (non-)joiners, which emoji
// sequences and several scripts need, are allowed.
func hidden(r rune) bool {
	switch {
	case r == '\u061C', r == '\u200E', r == '\u200F', // Arabic letter mark, LRM, RLM
		r >= '\u202A' && r <= '\u202E',              // embeddings and overrides
		r >= '\u2066' && r <= '\u2069',              // isolates
		r == '\u200B', r == '\u2060', r == '\uFEFF', // zero-width space, word joiner, BOM
		r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	}
	return false
}

// ValidateBody checks a markdown body.
func ValidateBody(b string) error {
	if len(b) > MaxBody {
		return inputErr("body", "is %d bytes; the limit is %d (1 MiB): attach large material in the workspace instead", len(b), MaxBody)
	}
	if !utf8.ValidString(b) {
		return inputErr("body", "is not valid UTF-8; re-encode it as UTF-8")
	}
	for i, r := range b {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return inputErr("body", "has a control character (%U) at byte %d; remove it", r, i)
		}
	}
	return nil
}

// ValidatePriority checks a priority (0 = none, 1 highest … 4).
func ValidatePriority(p int) error {
	if p < 0 || p > 4 {
		return inputErr("priority", "%d is out of range; use 1 (highest) to 4, or 0 for none", p)
	}
	return nil
}

// ValidateLabels checks labels.
func ValidateLabels(ls []string) error {
	if len(ls) > MaxLabels {
		return inputErr("labels", "has %d labels; the limit is %d", len(ls), MaxLabels)
	}
	for i, l := range ls {
		f := fmt.Sprintf("labels[%d]", i)
		switch {
		case !utf8.ValidString(l):
			return inputErr(f, "is not valid UTF-8")
		case l == "":
			return inputErr(f, "is empty")
		case utf8.RuneCountInString(l) > MaxLabelLen:
			return inputErr(f, "is longer than %d characters", MaxLabelLen)
		}
		for _, r := range l {
			if unicode.IsControl(r) || unicode.IsSpace(r) || r == ',' || hidden(r) {
				return inputErr(f, "%q has a space, comma, control or invisible formatting character; use e.g. needs-review", l)
			}
		}
	}
	return nil
}

// ValidateAgentName checks the shape of an agent profile name ("" = default).
func ValidateAgentName(a string) error {
	if a != "" && !agentName.MatchString(a) {
		return inputErr("agent", "%q is not a profile name (lower-case letters, digits, _ and -)", a)
	}
	return nil
}

// NormalizeSpec checks that raw is a JSON object within limits and returns it
// compacted ("{}" for empty input).
func NormalizeSpec(raw []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if len(raw) > MaxSpec {
		return nil, inputErr("spec", "is %d bytes; the limit is %d (256 KiB)", len(raw), MaxSpec)
	}
	if !utf8.Valid(raw) {
		return nil, inputErr("spec", "is not valid UTF-8")
	}
	if d := nesting(raw); d > MaxSpecNest {
		return nil, inputErr("spec", "nests %d levels deep; the limit is %d", d, MaxSpecNest)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, inputErr("spec", "is not valid JSON (%v); pass a JSON object such as {\"plan\": \"…\"}", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, inputErr("spec", "must be a JSON object, not %s", jsonType(v))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, inputErr("spec", "is not valid JSON (%v)", err)
	}
	return json.RawMessage(buf.Bytes()), nil
}

func nesting(raw []byte) int {
	depth, max := 0, 0
	inStr, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
			if depth > max {
				max = depth
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return max
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "something else"
}

// ValidateCard checks every operator-supplied field of c.
func ValidateCard(b Board, c Card) error {
	if err := ValidateTitle(c.Title); err != nil {
		return err
	}
	if err := ValidateBody(c.Body); err != nil {
		return err
	}
	if err := ValidatePriority(c.Priority); err != nil {
		return err
	}
	if err := ValidateLabels(c.Labels); err != nil {
		return err
	}
	if err := ValidateAgentName(c.Agent); err != nil {
		return err
	}
	if _, ok := b.Column(c.State); !ok {
		return &InputError{Field: "state", Msg: b.StateError("state", c.State).Error()[len("state: "):]}
	}
	if _, err := NormalizeSpec(c.Spec); err != nil {
		return err
	}
	return nil
}
