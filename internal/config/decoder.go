package config

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/suggest"
)

// decoder walks yaml.v3 nodes, collecting problems, warnings and ignored keys
// with their full key paths instead of stopping at the first error.
type decoder struct {
	lineOffset int // lines before the YAML starts (the opening ---)
	probs      []Problem
	warns      []string
	ignored    []string
	getenv     func(string) (string, bool)
}

func newDecoder(lineOffset int) *decoder {
	return &decoder{lineOffset: lineOffset, getenv: os.LookupEnv}
}

func (d *decoder) line(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return n.Line + d.lineOffset
}

func (d *decoder) errf(n *yaml.Node, path, format string, a ...any) {
	d.probs = append(d.probs, Problem{Line: d.line(n), Path: path, Msg: fmt.Sprintf(format, a...)})
}

func (d *decoder) warnf(path, format string, a ...any) {
	d.warns = append(d.warns, path+": "+fmt.Sprintf(format, a...))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

// strictness says what to do with a key a section does not know.
type strictness int

const (
	// strict: unknown keys are errors (drover's own sections).
	strict strictness = iota
	// lenient: unknown keys are ignored with a warning, unless they look like a
	// typo of a known key (Symphony-shared sections and the top level).
	lenient
)

// fields reads a mapping node into key → value, reporting duplicate and unknown
// keys. It returns nil when n is not a mapping (after reporting it).
func (d *decoder) fields(n *yaml.Node, path string, known []string, mode strictness) map[string]*yaml.Node {
	n = deref(n)
	if isNull(n) {
		return map[string]*yaml.Node{}
	}
	if n.Kind != yaml.MappingNode {
		d.errf(n, path, "must be a mapping of keys (%s), not %s", strings.Join(known, ", "), kindName(n))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errf(k, path, "keys must be plain names")
			continue
		}
		p := join(path, k.Value)
		if _, dup := out[k.Value]; dup {
			d.errf(k, p, "appears twice; keep one")
			continue
		}
		if !contains(known, k.Value) {
			sugg := suggest.Closest(k.Value, known)
			switch {
			case mode == strict:
				d.errf(k, p, "unknown key%s; valid keys here: %s", suggest.DidYouMean(sugg), strings.Join(known, ", "))
			case sugg != "":
				d.errf(k, p, "unknown key%s", suggest.DidYouMean(sugg))
			default:
				d.ignored = append(d.ignored, p)
				d.warnf(p, "not used by drover; ignored")
			}
			continue
		}
		out[k.Value] = v
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns the scalar node at n, or reports what was found instead.
func (d *decoder) scalar(n *yaml.Node, path, want string) (*yaml.Node, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		d.errf(n, path, "must be %s, not %s", want, kindName(n))
		return nil, false
	}
	return n, true
}

// expandMode says whether and how $VAR references in a string are expanded.
type expandMode int

const (
	expandPlain  expandMode = iota // expand; an unset variable is an error
	expandSecret                   // expand; an unset variable gives "" and a warning
	expandNone                     // shell text: leave $ alone
)

// str reads a string value (null → "").
func (d *decoder) str(n *yaml.Node, path string, mode expandMode) string {
	if isNull(deref(n)) {
		return ""
	}
	s, ok := d.scalar(n, path, "a string")
	if !ok {
		return ""
	}
	if mode == expandNone {
		return s.Value
	}
	v, missing := expandEnv(s.Value, d.getenv)
	if len(missing) > 0 {
		names := "$" + strings.Join(missing, ", $")
		if mode == expandSecret {
			d.warnf(path, "%s is not set; using an empty value", names)
		} else {
			d.errf(s, path, "refers to %s, which is not set; export it or write the value directly", names)
		}
	}
	return v
}

// integer reads a whole number.
func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(s.Value, "_", ""), 0, 64)
	if err != nil || s.Tag == "!!str" || v > math.MaxInt32 || v < math.MinInt32 {
		d.errf(s, path, "%q is not a whole number (e.g. 10)", s.Value)
		return 0, false
	}
	return int(v), true
}

// number reads a float.
func (d *decoder) number(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "a number")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s.Value, 64)
	if err != nil || s.Tag == "!!str" || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errf(s, path, "%q is not a number (e.g. 2.5)", s.Value)
		return 0, false
	}
	return v, true
}

// boolean reads true/false.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return false
	}
	var v bool
	if s.Tag != "!!bool" || s.Decode(&v) != nil {
		d.errf(s, path, "%q is not true or false", s.Value)
	}
	return v
}

// duration reads a Go duration string ("250ms", "10s", "5m"); negative
// durations are refused.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.scalar(n, path, `a duration such as "10s"`)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(s.Value))
	if err != nil {
		if _, e2 := strconv.ParseFloat(s.Value, 64); e2 == nil && s.Value != "0" {
			d.errf(s, path, "%q has no unit; write e.g. %ss or %sms", s.Value, s.Value, s.Value)
		} else {
			d.errf(s, path, "%q is not a duration; use Go syntax such as 250ms, 10s, 5m or 1h30m", s.Value)
		}
		return 0, false
	}
	if v < 0 {
		d.errf(s, path, "%q is negative; durations must be 0 or more", s.Value)
		return 0, false
	}
	return v, true
}

// millis reads a Symphony-style *_ms integer as a duration.
func (d *decoder) millis(n *yaml.Node, path string) (time.Duration, bool) {
	v, ok := d.integer(n, path)
	if !ok {
		return 0, false
	}
	if v < 0 {
		d.errf(n, path, "%d is negative; use 0 or more milliseconds", v)
		return 0, false
	}
	return time.Duration(v) * time.Millisecond, true
}

// strings reads a list of strings; a single comma-separated string is accepted.
func (d *decoder) strList(n *yaml.Node, path string, mode expandMode) []string {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		var out []string
		for _, part := range strings.Split(d.str(n, path, mode), ",") {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	if n.Kind != yaml.SequenceNode {
		d.errf(n, path, "must be a list of strings, not %s", kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		out = append(out, d.str(c, fmt.Sprintf("%s[%d]", path, i), mode))
	}
	return out
}

// durationPair reads a drover duration key and its Symphony *_ms twin; giving
// both is an error.
func durationPair(d *decoder, f map[string]*yaml.Node, section, key, msKey string, def time.Duration) time.Duration {
	v, hasD := f[key]
	m, hasM := f[msKey]
	switch {
	case hasD && hasM:
		d.errf(deref(m), section+"."+msKey, "is set together with %s.%s; keep one", section, key)
	case hasD:
		if x, ok := d.duration(v, section+"."+key); ok {
			return x
		}
	case hasM:
		if x, ok := d.millis(m, section+"."+msKey); ok {
			return x
		}
	}
	return def
}

// positive reads an optional count that must be at least 1.
func positive(d *decoder, f map[string]*yaml.Node, key, path string, def int) int {
	v, ok := f[key]
	if !ok {
		return def
	}
	x, ok := d.integer(v, path)
	if !ok {
		return def
	}
	if x < 1 {
		d.errf(deref(v), path, "%d is not allowed; use a positive number (it bounds an otherwise endless loop)", x)
		return def
	}
	return x
}

func nonZero(d *decoder, n *yaml.Node, path string, def time.Duration) time.Duration {
	v, ok := d.duration(n, path)
	if !ok {
		return def
	}
	if v == 0 {
		d.errf(deref(n), path, "0 is not allowed; use a positive duration such as 1m")
		return def
	}
	return v
}

// jsonCompatible converts YAML-decoded values (map[string]any, ints) into
// what encoding/json would produce.
func jsonCompatible(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// sortedKeys returns the keys of m in order, for stable error output.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// entry is one key/value pair of a mapping whose keys are names (profiles,
// kinds, states), in file order.
type entry struct {
	key   string
	knode *yaml.Node
	val   *yaml.Node
}

// entries reads a name → value mapping in file order, reporting duplicates.
func (d *decoder) entries(n *yaml.Node, path string) []entry {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errf(n, path, "must be a mapping of names to settings, not %s", kindName(n))
		return nil
	}
	var out []entry
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errf(k, path, "keys must be plain names")
			continue
		}
		if seen[k.Value] {
			d.errf(k, join(path, k.Value), "appears twice; keep one")
			continue
		}
		seen[k.Value] = true
		out = append(out, entry{k.Value, k, n.Content[i+1]})
	}
	return out
}

// durationOrMillis reads a Go duration, or whole milliseconds when the key is
// one of Symphony's *_ms spellings.
func (d *decoder) durationOrMillis(n *yaml.Node, path string) (time.Duration, bool) {
	if strings.HasSuffix(path, "_ms") {
		return d.millis(n, path)
	}
	return d.duration(n, path)
}
