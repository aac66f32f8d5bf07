package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/suggest"
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

// maxValues bounds the values one file may hold: aliases (*a) can make a
// small file expand to millions of them.
const maxValues = 100_000

// decoder fills the typed sections from the front matter's node tree: it
// walks the nodes against the fields' yaml tags, so every value is known by
// its key path and line, leaves scalars to yaml.v3 (Node.Decode), and
// collects every problem instead of stopping at the first.
type decoder struct {
	off     int               // file lines before the YAML (the opening ---)
	lines   map[string]int    // the file line of every key path the file gives
	renamed map[string]string // a drover key path → the Symphony path the file gave instead
	probs   []Problem
	warns   []string
	ignored []string
	budget  int // values left to read (maxValues)
}

func newDecoder(off int) *decoder {
	return &decoder{off: off, lines: map[string]int{}, renamed: map[string]string{}, budget: maxValues}
}

// errf reports a problem at path, on its line (or its nearest parent's).
func (d *decoder) errf(path, format string, a ...any) {
	path = d.rename(path)
	line := 0
	for p := path; line == 0 && p != ""; {
		line = d.lines[p]
		i := strings.LastIndexAny(p, ".[")
		p = p[:max(i, 0)]
	}
	d.errAt(line, path, format, a...)
}

func (d *decoder) errAt(line int, path, format string, a ...any) {
	d.probs = append(d.probs, Problem{Line: line, Path: path, Msg: fmt.Sprintf(format, a...)})
}

// check reports a problem at path unless ok.
func (d *decoder) check(ok bool, path, format string, a ...any) {
	if !ok {
		d.errf(path, format, a...)
	}
}

func (d *decoder) warnf(path, format string, a ...any) {
	d.warns = append(d.warns, d.rename(path)+": "+fmt.Sprintf(format, a...))
}

// ignore reports a key drover does not use.
func (d *decoder) ignore(path, why string) {
	d.ignored = append(d.ignored, path)
	d.warnf(path, "%s", why)
}

// has reports whether the file gives the key path.
func (d *decoder) has(path string) bool {
	_, ok := d.lines[path]
	return ok
}

func (d *decoder) rename(path string) string {
	for from, to := range d.renamed {
		if rest, ok := strings.CutPrefix(path, from); ok && (rest == "" || rest[0] == '.') {
			return to + rest
		}
	}
	return path
}

// alias takes a Symphony spelling's value (key from) for a drover key (to)
// when the file gives it; giving both is an error.
func alias[T any](d *decoder, to string, dst *T, from string, v T) {
	switch {
	case !d.has(from):
	case d.has(to):
		d.errf(from, "is set together with %s; keep one", to)
	default:
		*dst, d.renamed[to] = v, from
	}
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	nodeType     = reflect.TypeFor[yaml.Node]()
)

// decode fills v from n. tag is the struct tag of the field v is, or holds
// v (a list's or a map's values share their field's tag). Null keeps what
// v holds: the default.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, tag reflect.StructTag) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if d.budget--; d.budget == 0 {
		d.errf(path, "the file holds more than %d values (an alias repeating a list?); write it out plainly", maxValues)
	}
	if d.budget <= 0 || n.ShortTag() == "!!null" {
		return
	}
	mode := tag.Get("cfg")
	switch t := v.Type(); {
	case t == nodeType:
		v.Set(reflect.ValueOf(*n))
	case t == durationType:
		d.duration(n, v, path, mode)
	case t.Kind() == reflect.Struct:
		d.fields(n, v, path, mode == "lenient")
	case t.Kind() == reflect.Map:
		d.mapping(n, path, "names to settings", func(key, p string, val *yaml.Node) {
			k := reflect.ValueOf(key).Convert(t.Key())
			e := fresh(t.Elem()).Elem()
			if old := v.MapIndex(k); old.IsValid() {
				e.Set(old)
			}
			d.decode(val, e, p, tag)
			if v.IsNil() {
				v.Set(reflect.MakeMap(t))
			}
			v.SetMapIndex(k, e)
		})
	case t.Kind() == reflect.Slice:
		d.list(n, v, path, tag)
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(fresh(t.Elem()))
		}
		d.decode(n, v.Elem(), path, tag)
	case t.Kind() == reflect.String:
		if d.scalar(n, path, "a string") {
			v.SetString(d.expand(n.Value, path, mode))
		}
	default:
		d.value(n, v, path)
	}
}

// fresh is a new *t holding t's defaults (its setDefaults method).
func fresh(t reflect.Type) reflect.Value {
	p := reflect.New(t)
	if z, ok := p.Interface().(interface{ setDefaults() }); ok {
		z.setDefaults()
	}
	return p
}

// fields decodes a mapping into a struct's fields by their yaml tags. A key
// no field has is an error, or (lenient) ignored with a warning unless it
// looks like a typo of one.
func (d *decoder) fields(n *yaml.Node, v reflect.Value, path string, lenient bool) {
	var keys []string
	var fields []reflect.StructField
	for _, f := range reflect.VisibleFields(v.Type()) {
		if k, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); k != "" && k != "-" && !f.Anonymous {
			keys, fields = append(keys, k), append(fields, f)
		}
	}
	d.mapping(n, path, "keys ("+strings.Join(keys, ", ")+")", func(key, p string, val *yaml.Node) {
		if i := slices.Index(keys, key); i >= 0 {
			d.decode(val, v.FieldByIndex(fields[i].Index), p, fields[i].Tag)
			return
		}
		switch s := suggest.Closest(key, keys); {
		case !lenient:
			d.errf(p, "unknown key%s; valid keys here: %s", suggest.DidYouMean(s), strings.Join(keys, ", "))
		case s != "":
			d.errf(p, "unknown key%s", suggest.DidYouMean(s))
		default:
			d.ignore(p, "not used by drover; ignored")
		}
	})
}

// mapping calls each for every key of a mapping in file order, after
// recording its line; it reports a node that is no mapping, keys that are
// not names and keys given twice.
func (d *decoder) mapping(n *yaml.Node, path, of string, each func(key, path string, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.errf(path, "must be a mapping of %s, not %s", of, describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		for k.Kind == yaml.AliasNode {
			k = k.Alias
		}
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		switch {
		case k.Kind != yaml.ScalarNode:
			d.errAt(d.off+n.Content[i].Line, path, "keys must be plain names, not %s", describe(k))
		case seen[k.Value]:
			d.errAt(d.off+n.Content[i].Line, p, "appears twice; keep one")
		default:
			seen[k.Value], d.lines[p] = true, d.off+n.Content[i].Line
			each(k.Value, p, n.Content[i+1])
		}
	}
}

// list decodes a sequence; a single string is a comma-separated list.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string, tag reflect.StructTag) {
	if n.Kind == yaml.ScalarNode && v.Type() == reflect.TypeFor[[]string]() {
		var out []string
		for _, s := range strings.Split(d.expand(n.Value, path, tag.Get("cfg")), ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		v.Set(reflect.ValueOf(out))
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errf(path, "must be a list, not %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = d.off + c.Line
		d.decode(c, s.Index(i), p, tag)
	}
	v.Set(s)
}

// scalar reports a node that is a list or a mapping where a value belongs.
func (d *decoder) scalar(n *yaml.Node, path, want string) bool {
	if n.Kind != yaml.ScalarNode {
		d.errf(path, "must be %s, not %s", want, describe(n))
		return false
	}
	return true
}

// value decodes a number, a bool or a free-form value (any) with yaml.v3,
// refusing what it would convert quietly: 2.5 or "3" into an int.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	x := reflect.New(v.Type())
	if v.Kind() == reflect.Interface {
		if err := n.Decode(x.Interface()); err != nil {
			d.errf(path, "cannot be read: %v", err)
			return
		}
		v.Set(x.Elem())
		return
	}
	what, tags := "a whole number (e.g. 10)", "!!int"
	switch v.Kind() {
	case reflect.Bool:
		what, tags = "true or false", "!!bool"
	case reflect.Float64:
		what, tags = "a number (e.g. 2.5)", "!!int !!float"
	}
	if !d.scalar(n, path, what) {
		return
	}
	err := n.Decode(x.Interface())
	if f, ok := x.Elem().Interface().(float64); err != nil || !strings.Contains(tags, n.ShortTag()) || ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		d.errf(path, "%q is not %s", n.Value, what)
		return
	}
	v.Set(x.Elem())
}

// duration reads a Go duration (10s), Symphony's milliseconds (a key
// ending in _ms) or a retention period (cfg:"period": 90d, forever).
func (d *decoder) duration(n *yaml.Node, v reflect.Value, path, mode string) {
	if !d.scalar(n, path, `a duration such as "10s"`) {
		return
	}
	var x time.Duration
	var err error
	switch s := strings.TrimSpace(n.Value); {
	case strings.HasSuffix(path, "_ms"):
		var ms int64
		if n.ShortTag() != "!!int" || n.Decode(&ms) != nil || ms > math.MaxInt64/int64(time.Millisecond) {
			err = errors.New("is not a whole number of milliseconds (e.g. 5000)")
		} else if x = time.Duration(ms) * time.Millisecond; ms < 0 {
			err = errors.New("is negative; use 0 or more milliseconds")
		}
	case mode == "period":
		x, err = parsePeriod(s)
	default:
		if x, err = time.ParseDuration(s); err == nil && x < 0 {
			err = errors.New("is negative; durations must be 0 or more")
		} else if _, e := strconv.ParseFloat(s, 64); err != nil && e == nil {
			err = fmt.Errorf("has no unit; write e.g. %ss or %sms", s, s)
		} else if err != nil {
			err = errors.New("is not a duration; use Go syntax such as 250ms, 10s, 5m or 1h30m")
		}
	}
	if err != nil {
		d.errf(path, "%q %v", n.Value, err)
		return
	}
	v.SetInt(int64(x))
}

// parsePeriod reads "90d", "720h", "0" or "forever".
func parsePeriod(s string) (time.Duration, error) {
	fix := "; write days (90d), a Go duration (720h), or 0 / forever to keep everything"
	if s == "0" || strings.EqualFold(s, "forever") {
		return 0, nil
	}
	v, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, e := strconv.ParseFloat(days, 64)
		v, err = time.Duration(n*float64(Day)), e
	}
	switch {
	case err != nil:
		return 0, errors.New("is not a period" + fix)
	case v < 0:
		return 0, errors.New("is negative" + fix)
	case v > 0 && v < time.Hour:
		return 0, errors.New("is shorter than an hour (a slip for days?)" + fix)
	}
	return v, nil
}

// describe names what a node is, for "must be …, not …".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return strconv.Quote(n.Value)
}

// expand replaces $NAME and ${NAME} in s with the environment's values
// (cfg:"verbatim" keeps s as written). An unset variable is an error, or
// for a secret an empty value and a warning (never the value itself).
func (d *decoder) expand(s, path, mode string) string {
	if mode == "verbatim" {
		return s
	}
	v, missing := expandEnv(s, os.LookupEnv)
	if names := "$" + strings.Join(missing, ", $"); len(missing) > 0 && mode == "secret" {
		d.warnf(path, "%s is not set; using an empty value", names)
	} else if len(missing) > 0 {
		d.errf(path, "refers to %s, which is not set; export it or write the value directly", names)
	}
	return v
}

// expandEnv replaces $NAME and ${NAME} with environment values; $$ is a
// literal $. Anything else after $ is kept as written. It returns the names
// that were referenced but unset.
func expandEnv(s string, getenv func(string) (string, bool)) (string, []string) {
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); i++ {
		rest, name, width := s[i+1:], "", 0
		switch {
		case s[i] != '$' || rest == "":
		case rest[0] == '$':
			name, width = "$", 1
		case rest[0] == '{':
			if end := strings.IndexByte(rest, '}'); end > 1 && isEnvName(rest[1:end]) {
				name, width = rest[1:end], end+1
			}
		default:
			for width < len(rest) && isEnvChar(rest[width], width == 0) {
				width++
			}
			name = rest[:width]
		}
		switch {
		case name == "":
			b.WriteByte(s[i])
			continue
		case name == "$":
			b.WriteByte('$')
		default:
			v, ok := getenv(name)
			if !ok || v == "" {
				missing = append(missing, name)
			}
			b.WriteString(v)
		}
		i += width
	}
	return b.String(), missing
}

func isEnvChar(c byte, first bool) bool {
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9')
}

func isEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isEnvChar(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}
