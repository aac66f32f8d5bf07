package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/osteele/liquid"
	"github.com/osteele/liquid/render"

	"github.com/drover-dev/drover/board"
)

// DefaultPrompt is the template used when WORKFLOW.md has no body.
const DefaultPrompt = `You are working on {{ card.identifier }}: {{ card.title }}
{% if attempt > 1 %}
This is attempt {{ attempt }}. Earlier attempts did not finish: look at the
workspace for what they left before starting again.
{% endif %}
{% if card.body != "" %}
{{ card.body }}
{% else %}
The card has no description; work from its title.
{% endif %}
Work only inside {{ workspace }}. When the work is done, say what you changed
and how you checked it. If you cannot continue without a human decision, ask
one clear question and stop.
`

// Template variables and their fields. card.spec is free-form (the card's
// spec object); every other field is fixed.
var (
	promptRoots = []string{"card", "issue", "attempt", "run", "workspace"}
	cardFields  = []string{"id", "identifier", "title", "body", "state", "priority", "labels", "agent", "spec", "url", "blocked_by"}
	issueFields = []string{"id", "identifier", "title", "description", "state", "priority", "labels", "url", "blocked_by"}
	runFields   = []string{"id", "attempt"}
	rootFields  = map[string][]string{"card": cardFields, "issue": issueFields, "run": runFields}
)

// RenderError is a prompt that cannot render for one card (e.g. a spec field
// the template uses is missing). The dispatcher blocks the card with kind
// invalid_input, naming Variable.
type RenderError struct {
	Line     int    // line in WORKFLOW.md (0 when unknown)
	Variable string // e.g. "card.spec.plan" ("" when not a variable problem)
	Msg      string
}

func (e *RenderError) Error() string {
	loc := "prompt"
	if e.Line > 0 {
		loc = fmt.Sprintf("prompt (WORKFLOW.md line %d)", e.Line)
	}
	return loc + ": " + e.Msg
}

func newEngine() *liquid.Engine {
	e := liquid.NewEngine()
	e.StrictVariables()
	return e
}

// compilePrompt compiles cfg.Prompt strictly: a syntax error, an unknown tag,
// variable, field or filter is a load-time problem naming it.
func compilePrompt(d *decoder, cfg *Config) {
	if strings.TrimSpace(cfg.Prompt) == "" {
		cfg.Prompt, cfg.PromptLine = DefaultPrompt, 0
	}
	eng := newEngine()
	tmpl, err := parseTemplate(eng, cfg.Prompt, cfg.PromptLine)
	if err != nil {
		line := 0
		var se liquid.SourceError
		if errors.As(err, &se) {
			line = se.LineNumber()
		}
		d.probs = append(d.probs, Problem{Line: line, Path: "prompt", Msg: "template does not compile: " + liquidMsg(err) + " (Liquid syntax: {{ card.title }}, {% if … %}…{% endif %})"})
		return
	}
	c := &checker{eng: eng, locals: map[string]bool{"forloop": true, "tablerowloop": true}, filterOK: map[string]bool{}, mul: 1}
	c.walk(tmpl.GetRoot())
	for _, r := range c.refs {
		c.check(r)
	}
	for _, p := range c.probs {
		d.probs = append(d.probs, p)
	}
	cfg.tmpl = tmpl
}

func parseTemplate(eng *liquid.Engine, src string, line int) (t *liquid.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if line < 1 {
		line = 1
	}
	tmpl, serr := eng.ParseTemplateLocation([]byte(src), "", line)
	if serr != nil {
		return nil, serr
	}
	return tmpl, nil
}

var liquidPrefix = regexp.MustCompile(`^Liquid (?:exception|error)(?: \(line \d+\))?: `)

func liquidMsg(err error) string {
	return liquidPrefix.ReplaceAllString(oneLine(err.Error()), "")
}

// RenderPrompt renders the prompt for one run. A failure (e.g. the template
// reads card.spec.plan and this card's spec has no plan) is a *RenderError
// naming the variable.
func (c *Config) RenderPrompt(card board.Card, attempt int, runID, workspace string) (string, error) {
	if c.tmpl == nil {
		return "", &RenderError{Msg: "no compiled template (config was not loaded with Load or Parse)"}
	}
	vars, err := c.bindings(card, attempt, runID, workspace)
	if err != nil {
		return "", err
	}
	var buf capWriter
	serr, panicked := safeRender(c.tmpl, &buf, vars)
	switch {
	case buf.over:
		return "", &RenderError{Msg: fmt.Sprintf("the rendered prompt is larger than %d bytes; shorten the template or the card", MaxPromptBytes)}
	case panicked != nil:
		return "", &RenderError{Msg: fmt.Sprintf("the template failed for this card: %v", panicked)}
	case serr != nil:
		return "", renderError(serr)
	}
	return buf.String(), nil
}

// safeRender renders, turning a panic inside the Liquid engine (it panics on
// write errors inside loops, and on some filter failures) into a value.
func safeRender(t *liquid.Template, w *capWriter, vars map[string]any) (serr liquid.SourceError, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	return t.FRender(w, vars), nil
}

// MaxPromptBytes bounds a rendered prompt.
const MaxPromptBytes = 4 << 20

// MaxLiteralRange bounds a literal (a..b) range in the template.
const MaxLiteralRange = 10000

type capWriter struct {
	strings.Builder
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > MaxPromptBytes {
		w.over = true
		return 0, errors.New("prompt too large")
	}
	return w.Builder.Write(p)
}

var objectSrc = regexp.MustCompile(`\{\{-?\s*(.*?)\s*-?\}\}`)

func renderError(err liquid.SourceError) *RenderError {
	re := &RenderError{Line: err.LineNumber(), Msg: liquidMsg(err)}
	if m := objectSrc.FindStringSubmatch(err.Error()); m != nil {
		expr := strings.TrimSpace(strings.SplitN(m[1], "|", 2)[0])
		if strings.Contains(err.Error(), "undefined variable") {
			re.Variable = expr
			re.Msg = fmt.Sprintf("{{ %s }} has no value for this card; set it (e.g. in the card's spec) or guard it with {%% if %s %%}…{%% endif %%} or | default: \"…\"", m[1], expr)
		}
	}
	return re
}

// bindings are the template variables for one run.
func (c *Config) bindings(card board.Card, attempt int, runID, workspace string) (map[string]any, error) {
	spec := map[string]any{}
	if len(card.Spec) > 0 && string(card.Spec) != "null" {
		if err := json.Unmarshal(card.Spec, &spec); err != nil {
			return nil, &RenderError{Variable: "card.spec", Msg: "card.spec is not a JSON object: " + err.Error()}
		}
	}
	labels := make([]any, len(card.Labels))
	for i, l := range card.Labels {
		labels[i] = l
	}
	blockedBy := make([]any, len(card.BlockedBy))
	for i, b := range card.BlockedBy {
		blockedBy[i] = b
	}
	url := ""
	if c.Server.Port != 0 && card.Identifier != "" {
		url = fmt.Sprintf("http://%s:%d/api/v1/%s", c.Server.Host, c.Server.Port, card.Identifier)
	}
	agentName := card.Agent
	if agentName == "" {
		agentName = c.Agents.Default
	}
	return map[string]any{
		"card": map[string]any{
			"id": card.ID, "identifier": card.Identifier, "title": card.Title, "body": card.Body,
			"state": card.State, "priority": card.Priority, "labels": labels, "agent": agentName,
			"spec": spec, "url": url, "blocked_by": blockedBy,
		},
		"issue": map[string]any{
			"id": card.ID, "identifier": card.Identifier, "title": card.Title, "description": card.Body,
			"state": card.State, "priority": card.Priority, "labels": labels, "url": url, "blocked_by": blockedBy,
		},
		"attempt":   attempt,
		"run":       map[string]any{"id": runID, "attempt": attempt},
		"workspace": workspace,
	}, nil
}

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
					c.probs = append(c.probs, Problem{Line: n.SourceLoc.LineNo, Path: "prompt", Msg: fmt.Sprintf("nested loops in %s run more than %d times; a prompt loop should be short", oneLine(n.Source), MaxLiteralRange)})
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
		c.probs = append(c.probs, Problem{Line: line, Path: "prompt", Msg: "{% include %} is not supported: the prompt must be self-contained so it can be checked at load; paste the text in"})
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
			c.probs = append(c.probs, Problem{Line: line, Path: "prompt", Msg: fmt.Sprintf("range (%s..%s) in %s is longer than %d; a prompt loop should be short", m[1], m[2], oneLine(src), MaxLiteralRange)})
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
			c.probs = append(c.probs, Problem{Line: r.line, Path: "prompt", Msg: fmt.Sprintf("unknown filter %q in %s; see the Liquid filters (e.g. upcase, default, join)", r.filter, src)})
		}
	case c.locals[r.root]:
	case !contains(promptRoots, r.root):
		c.probs = append(c.probs, Problem{Line: r.line, Path: "prompt", Msg: fmt.Sprintf("unknown variable %q in %s%s; the prompt can use %s", r.root, src, didYouMean(suggest(r.root, promptRoots)), strings.Join(promptRoots, ", "))})
	case r.field != "" && rootFields[r.root] != nil && !contains(rootFields[r.root], r.field) && !isCollectionProp(r.field):
		fs := rootFields[r.root]
		c.probs = append(c.probs, Problem{Line: r.line, Path: "prompt", Msg: fmt.Sprintf("unknown variable %q in %s%s; %s has %s", r.root+"."+r.field, src, didYouMean(suggest(r.field, fs)), r.root, strings.Join(fs, ", "))})
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
