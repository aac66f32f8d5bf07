package prompt

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/osteele/liquid"
	"github.com/osteele/liquid/render"

	"github.com/drover-dev/drover/internal/suggest"
)

// ref is a variable or filter use found in the template.
type ref struct {
	line   int
	src    string // the tag or object source, for messages
	root   string
	field  string
	filter string
}

// checker walks a compiled template and collects variable and filter uses.
type checker struct {
	eng      *liquid.Engine
	locals   map[string]bool
	refs     []ref
	probs    []Problem
	filterOK map[string]bool
	mul      int64 // iterations of the enclosing literal-range loops
}

var (
	assignRe  = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*)\s*=(.*)$`)
	captureRe = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*)\s*$`)
	loopRe    = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*)\s+in\s+(.*)$`)
	rangeRe   = regexp.MustCompile(`\(\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*\)`)
)

func (c *checker) walk(n render.Node) {
	switch n := n.(type) {
	case *render.SeqNode:
		for _, ch := range n.Children {
			c.walk(ch)
		}
	case *render.ObjectNode:
		c.scan(n.SourceLoc.LineNo, n.Source, n.Args)
	case *render.TagNode:
		c.tag(n.SourceLoc.LineNo, n.Source, n.Name, n.Args)
	case *render.BlockNode:
		if n.Name == "comment" || n.Name == "raw" {
			return
		}
		c.tag(n.SourceLoc.LineNo, n.Source, n.Name, n.Args)
		outer := c.mul
		if n.Name == "for" || n.Name == "tablerow" {
			if m := rangeRe.FindStringSubmatch(n.Args); m != nil {
				a, _ := strconv.ParseInt(m[1], 10, 64)
				b, _ := strconv.ParseInt(m[2], 10, 64)
				span := max(b-a, a-b) + 1
				if span <= MaxLiteralRange && c.mul*span > MaxLiteralRange {
					c.probs = append(c.probs, Problem{Line: n.SourceLoc.LineNo, Msg: fmt.Sprintf("nested loops in %s run more than %d times; a prompt loop should be short", oneLine(n.Source), MaxLiteralRange)})
				}
				c.mul = min(c.mul*span, MaxLiteralRange+1)
			}
		}
		for _, ch := range n.Body {
			c.walk(ch)
		}
		c.mul = outer
		for _, cl := range n.Clauses {
			c.walk(cl)
		}
	}
}

func (c *checker) tag(line int, src, name, args string) {
	switch name {
	case "assign":
		if m := assignRe.FindStringSubmatch(args); m != nil {
			c.locals[m[1]] = true
			c.scan(line, src, m[2])
		}
	case "capture":
		if m := captureRe.FindStringSubmatch(args); m != nil {
			c.locals[m[1]] = true
		}
	case "for", "tablerow":
		if m := loopRe.FindStringSubmatch(args); m != nil {
			c.locals[m[1]] = true
			c.scan(line, src, m[2])
		}
	case "include":
		c.probs = append(c.probs, Problem{Line: line, Msg: "{% include %} is not supported: the prompt must be self-contained so it can be checked at load; paste the text in"})
	case "else", "break", "continue":
	default:
		c.scan(line, src, args)
	}
}

var keywords = map[string]bool{"and": true, "or": true, "not": true, "contains": true, "true": true, "false": true, "nil": true, "null": true, "empty": true, "blank": true, "in": true, "reversed": true}

// scan finds variable roots (with their first field) and filter names in a
// Liquid expression.
func (c *checker) scan(line int, src, expr string) {
	for _, m := range rangeRe.FindAllStringSubmatch(expr, -1) {
		a, errA := strconv.ParseInt(m[1], 10, 64)
		b, errB := strconv.ParseInt(m[2], 10, 64)
		if errA != nil || errB != nil || b-a > MaxLiteralRange || a-b > MaxLiteralRange {
			c.probs = append(c.probs, Problem{Line: line, Msg: fmt.Sprintf("range (%s..%s) in %s is longer than %d; a prompt loop should be short", m[1], m[2], oneLine(src), MaxLiteralRange)})
		}
	}
	expectFilter, afterDot := false, false
	for i := 0; i < len(expr); {
		ch := expr[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(expr[i+1:], ch)
			if j < 0 {
				return
			}
			i += j + 2
			afterDot = false
		case ch >= '0' && ch <= '9':
			for i < len(expr) && (expr[i] >= '0' && expr[i] <= '9' || expr[i] == '.') {
				i++
			}
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(expr) && (expr[j] == '_' || expr[j] == '-' || expr[j] >= 'a' && expr[j] <= 'z' || expr[j] >= 'A' && expr[j] <= 'Z' || expr[j] >= '0' && expr[j] <= '9') {
				j++
			}
			if j < len(expr) && expr[j] == '?' {
				j++
			}
			word := expr[i:j]
			next := strings.TrimLeft(expr[j:], " \t\n")
			switch {
			case expectFilter:
				c.refs = append(c.refs, ref{line: line, src: src, filter: word})
				expectFilter = false
			case afterDot, keywords[word], strings.HasPrefix(next, ":"):
			default:
				r := ref{line: line, src: src, root: word}
				if strings.HasPrefix(next, ".") {
					rest := next[1:]
					k := 0
					for k < len(rest) && (rest[k] == '_' || rest[k] == '-' || rest[k] >= 'a' && rest[k] <= 'z' || rest[k] >= 'A' && rest[k] <= 'Z' || rest[k] >= '0' && rest[k] <= '9' || rest[k] == '?') {
						k++
					}
					r.field = rest[:k]
				}
				c.refs = append(c.refs, r)
			}
			afterDot = false
			i = j
		case ch == '|':
			expectFilter, afterDot = true, false
			i++
		case ch == '.':
			afterDot = true
			i++
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		default:
			afterDot = false
			i++
		}
	}
}

func (c *checker) check(r ref) {
	src := oneLine(r.src)
	switch {
	case r.filter != "":
		if !c.filterDefined(r.filter) {
			c.probs = append(c.probs, Problem{Line: r.line, Msg: fmt.Sprintf("unknown filter %q in %s; see the Liquid filters (e.g. upcase, default, join)", r.filter, src)})
		}
	case c.locals[r.root]:
	case !slices.Contains(promptRoots, r.root):
		c.probs = append(c.probs, Problem{Line: r.line, Msg: fmt.Sprintf("unknown variable %q in %s%s; the prompt can use %s", r.root, src, suggest.DidYouMean(suggest.Closest(r.root, promptRoots)), strings.Join(promptRoots, ", "))})
	case r.field != "" && rootFields[r.root] != nil && !slices.Contains(rootFields[r.root], r.field) && !isCollectionProp(r.field):
		fs := rootFields[r.root]
		c.probs = append(c.probs, Problem{Line: r.line, Msg: fmt.Sprintf("unknown variable %q in %s%s; %s has %s", r.root+"."+r.field, src, suggest.DidYouMean(suggest.Closest(r.field, fs)), r.root, strings.Join(fs, ", "))})
	}
}

func isCollectionProp(f string) bool { return f == "size" || f == "first" || f == "last" }

// filterDefined asks the engine itself whether a filter exists.
func (c *checker) filterDefined(name string) bool {
	if ok, seen := c.filterOK[name]; seen {
		return ok
	}
	ok := true
	if !regexp.MustCompile(`^[A-Za-z_][\w-]*\??$`).MatchString(name) {
		ok = false
	} else if _, err := c.eng.ParseAndRenderString("{{ 'x' | "+name+" }}", nil); err != nil && strings.Contains(err.Error(), "undefined filter") {
		ok = false
	}
	c.filterOK[name] = ok
	return ok
}
