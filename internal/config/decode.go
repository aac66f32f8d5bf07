package config

import (
	"cmp"
	"encoding"
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

	"github.com/drover-dev/drover/internal/agent"
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

// Error renders the problems on one line, each naming its key path: the
// first after file:line, the others after their line.
func (e *Error) Error() string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		switch {
		case i == 0 && e.File != "" && p.Line > 0:
			out[i] = fmt.Sprintf("%s:%d: ", e.File, p.Line)
		case i == 0 && e.File != "":
			out[i] = e.File + ": "
		case p.Line > 0:
			out[i] = fmt.Sprintf("line %d: ", p.Line)
		}
		out[i] += p.String()
	}
	return strings.Join(out, "; ")
}

// decoder fills the typed sections from the front matter's node tree: it
// walks the nodes against the fields' yaml tags, so each value is known by
// its key path and line, leaves scalars to yaml.v3 (Node.Decode), and
// collects every problem instead of stopping at the first.
type decoder struct {
	off     int               // file lines before the YAML (the opening ---)
	lines   map[string]int    // the file line of each key path the file gives
	renamed map[string]string // drover's key path → the Symphony one the file gave
	unread  map[string]bool   // the key paths whose values could not be read
	probs   []Problem
	warns   []string
	ignored []string
	budget  int // values left to read: aliases (*a) can make a small file huge
}

// errf reports a problem at path, on its line (or its nearest parent's),
// unless the value there could not be read: what follows from that is no news.
func (d *decoder) errf(path, format string, a ...any) {
	path = d.rename(path)
	line := 0
	for p := path; p != ""; p = p[:max(strings.LastIndexAny(p, ".["), 0)] {
		if d.unread[p] {
			return
		}
		line = cmp.Or(line, d.lines[p])
	}
	d.probs = append(d.probs, Problem{Line: line, Path: path, Msg: fmt.Sprintf(format, a...)})
}

// unreadable is errf for a value the decoder could not read.
func (d *decoder) unreadable(path, format string, a ...any) {
	d.errf(path, format, a...)
	d.unread[d.rename(path)] = true
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

// alias takes the value of a Symphony key (from) for drover's (to) when the
// file gives it; giving both is an error.
func alias[T any](d *decoder, to string, dst *T, from string, v T) {
	if d.has(from) && d.has(to) {
		d.errf(from, "is set together with %s; keep one", to)
	} else if d.has(from) {
		*dst, d.renamed[to] = v, from
	}
}

// decode fills v from n. tag is the struct tag of v's field (a list's or a
// map's values share it). Null keeps what v holds: the default.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, tag reflect.StructTag) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if d.budget--; d.budget == 0 {
		d.unreadable(path, "the file holds over %d values (an alias repeating a list?); write it out plainly", maxValues)
	}
	mode, t := tag.Get("cfg"), v.Type()
	switch {
	case d.budget <= 0 || n.ShortTag() == "!!null":
	case t == reflect.TypeFor[yaml.Node]():
		v.Set(reflect.ValueOf(*n))
	case t == reflect.TypeFor[time.Duration]():
		if d.scalar(n, path, `a duration such as "10s"`) {
			d.duration(n.Value, v, path, mode)
		}
	case reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		if d.scalar(n, path, "a string") {
			if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(d.expand(n.Value, path, mode))); err != nil {
				d.unreadable(path, "%v", err)
			}
		}
	case t.Kind() == reflect.Struct:
		d.fields(n, v, path, mode == "lenient")
	case t.Kind() == reflect.Map:
		d.mapping(n, path, "names to settings", func(key, p string, val *yaml.Node) {
			k, e := reflect.ValueOf(key).Convert(t.Key()), fresh(t.Elem()).Elem()
			if old := v.MapIndex(k); old.IsValid() {
				e.Set(old)
			}
			d.decode(val, e, p, tag)
			if v.IsNil() {
				v.Set(reflect.MakeMap(t))
			}
			v.SetMapIndex(k, e)
		})
	case t == reflect.TypeFor[[]string]() && n.Kind == yaml.ScalarNode: // "a, b"
		var list []string
		for _, s := range strings.Split(d.expand(n.Value, path, mode), ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		v.Set(reflect.ValueOf(list))
	case t.Kind() == reflect.Slice:
		if of := ""; n.Kind != yaml.SequenceNode {
			if t.Elem().Kind() == reflect.Struct {
				of = " of {" + strings.Join(keysOf(t.Elem()), ", ") + "}"
			}
			d.unreadable(path, "must be a list%s, not %s", of, describe(n))
			return
		}
		v.Set(reflect.MakeSlice(t, len(n.Content), len(n.Content)))
		for i, c := range n.Content[:min(len(n.Content), max(d.budget, 0))] {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.lines[p] = d.off + c.Line
			d.decode(c, v.Index(i), p, tag)
		}
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

const maxValues = 100_000

// fresh is a new *t holding t's defaults (its setDefaults method).
func fresh(t reflect.Type) reflect.Value {
	p := reflect.New(t)
	if z, ok := p.Interface().(interface{ setDefaults() }); ok {
		z.setDefaults()
	}
	return p
}

// fields decodes a mapping into a struct's fields by their yaml tags. A key
// no field has is an error or, lenient, ignored with a warning unless it
// looks like a typo of one.
func (d *decoder) fields(n *yaml.Node, v reflect.Value, path string, lenient bool) {
	keys, fields := keysOf(v.Type()), fieldsOf(v.Type())
	d.mapping(n, path, "keys ("+strings.Join(keys, ", ")+")", func(key, p string, val *yaml.Node) {
		switch i, s := slices.Index(keys, key), suggest.Closest(key, keys); {
		case i >= 0:
			d.decode(val, v.FieldByIndex(fields[i].Index), p, fields[i].Tag)
		case !lenient:
			d.unreadable(p, "unknown key%s; valid keys here: %s", suggest.DidYouMean(s), strings.Join(keys, ", "))
		case s != "":
			d.unreadable(p, "unknown key%s", suggest.DidYouMean(s))
		default:
			d.ignore(p, "not used by drover; ignored")
		}
	})
}

// fieldsOf is a struct's fields that are keys (their yaml tags), with those
// of the structs it embeds; keysOf is their keys.
func fieldsOf(t reflect.Type) []reflect.StructField {
	return slices.DeleteFunc(reflect.VisibleFields(t), func(f reflect.StructField) bool { return f.Anonymous || keyOf(f) == "" })
}

func keysOf(t reflect.Type) (keys []string) {
	for _, f := range fieldsOf(t) {
		keys = append(keys, keyOf(f))
	}
	return keys
}

func keyOf(f reflect.StructField) string {
	if k, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); k != "-" {
		return k
	}
	return ""
}

// mapping calls each for the keys of a mapping in file order, after noting
// their lines, and reports what is no mapping, keys that are not names and
// keys given twice.
func (d *decoder) mapping(n *yaml.Node, path, of string, each func(key, path string, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.unreadable(path, "must be a mapping of %s, not %s", of, describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content) && d.budget > 0; i += 2 {
		k := n.Content[i]
		for k.Kind == yaml.AliasNode {
			k = k.Alias
		}
		p, line := strings.TrimPrefix(path+"."+k.Value, "."), d.off+n.Content[i].Line
		switch {
		case k.Kind != yaml.ScalarNode:
			d.probs = append(d.probs, Problem{Line: line, Path: path, Msg: "keys must be plain names, not " + describe(k)})
		case seen[k.Value]:
			d.probs = append(d.probs, Problem{Line: line, Path: p, Msg: "appears twice; keep one"})
		default:
			seen[k.Value], d.lines[p] = true, line
			each(k.Value, p, n.Content[i+1])
		}
	}
}

// scalar reports a list or a mapping where a value belongs.
func (d *decoder) scalar(n *yaml.Node, path, want string) bool {
	if n.Kind != yaml.ScalarNode {
		d.unreadable(path, "must be %s, not %s", want, describe(n))
	}
	return n.Kind == yaml.ScalarNode
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

// scalars are the kinds value checks the YAML tag of, and what they take.
var scalars = map[reflect.Kind][2]string{
	reflect.Int: {"!!int", "a whole number (e.g. 10)"}, reflect.Int64: {"!!int", "a whole number (e.g. 10)"},
	reflect.Float64: {"!!int !!float", "a number (e.g. 2.5)"}, reflect.Bool: {"!!bool", "true or false"},
}

// value decodes a number, a bool or a free-form value (any) with yaml.v3,
// refusing what it would convert quietly: 2.5 or "3" into an int.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	want, typed := scalars[v.Kind()]
	if typed && !d.scalar(n, path, want[1]) {
		return
	}
	x := reflect.New(v.Type())
	err := n.Decode(x.Interface())
	f, isFloat := x.Elem().Interface().(float64)
	switch {
	case typed && (err != nil || !strings.Contains(want[0], n.ShortTag()) || isFloat && (math.IsNaN(f) || math.IsInf(f, 0))):
		d.unreadable(path, "%q is not %s", n.Value, want[1])
	case err != nil:
		d.unreadable(path, "cannot be read: %v", err)
	default:
		v.Set(x.Elem())
	}
}

// duration reads a Go duration (10s) or days (90d); a key ending in _ms
// takes Symphony's whole milliseconds, a cfg:"period" forever too (0).
func (d *decoder) duration(s string, v reflect.Value, path, mode string) {
	s = strings.TrimSpace(s)
	x, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, e := strconv.ParseFloat(days, 64)
		x, err = time.Duration(n*float64(Day)), e
	}
	_, notNumber := strconv.ParseFloat(s, 64)
	ms, notMS := strconv.ParseInt(s, 10, 64)
	switch {
	case strings.HasSuffix(path, "_ms") && (notMS != nil || ms > math.MaxInt64/int64(time.Millisecond)):
		err = errors.New("is not a whole number of milliseconds (e.g. 5000)")
	case strings.HasSuffix(path, "_ms"):
		x, err = time.Duration(ms)*time.Millisecond, nil
	case mode == "period" && strings.EqualFold(s, "forever"):
		x, err = 0, nil
	case err != nil && notNumber == nil && mode == "period":
		err = fmt.Errorf("has no unit; write e.g. %sd", s)
	case err != nil && notNumber == nil:
		err = fmt.Errorf("has no unit; write e.g. %ss or %sms", s, s)
	case err != nil:
		err = errors.New("is not a duration; use Go syntax such as 250ms, 10s, 5m or 1h30m, or days (90d)")
	}
	if err == nil && x < 0 {
		err = errors.New("is negative; durations must be 0 or more")
	}
	if err != nil {
		d.unreadable(path, "%q %v", s, err)
	} else {
		v.SetInt(int64(x))
	}
}

// expand replaces $NAME, ${NAME} in s with the environment's values ($$ is
// a $, anything else after $ stays; cfg:"verbatim" keeps s as written). An
// unset variable is an error or, for a secret, "" and a warning that never
// holds a value.
func (d *decoder) expand(s, path, mode string) string {
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); i++ {
		name, w := "", 0
		if rest := s[i+1:]; s[i] == '$' && rest != "" && mode != "verbatim" {
			switch end := strings.IndexByte(rest, '}'); {
			case rest[0] == '$':
				name, w = "$", 1
			case rest[0] == '{' && end > 1 && agent.IsEnvName(rest[1:end]):
				name, w = rest[1:end], end+1
			case rest[0] != '{':
				for w < len(rest) && agent.IsEnvName(rest[:w+1]) {
					w++
				}
				name = rest[:w]
			}
		}
		switch v, ok := os.LookupEnv(name); {
		case name == "":
			b.WriteByte(s[i])
		case name == "$":
			b.WriteByte('$')
		case !ok || v == "":
			missing = append(missing, name)
		default:
			b.WriteString(v)
		}
		i += w
	}
	if names := "$" + strings.Join(missing, ", $"); len(missing) > 0 && mode == "secret" {
		d.warnf(path, "%s is not set; using an empty value", names)
	} else if len(missing) > 0 {
		d.unreadable(path, "refers to %s, which is not set; export it or write the value directly", names)
	}
	return b.String()
}
