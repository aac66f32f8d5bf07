package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/osteele/liquid"
	"github.com/osteele/liquid/render"

	"github.com/drover-dev/drover/internal/board"
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
	e.RegisterTag(loopTick, tickLoop)
	return e
}

// Card data decides how often a loop runs ({% for x in card.spec.items %},
// (1..card.priority)), so a render is bounded at run time: compilePrompt puts
// a {% drover_loop_tick %} at the start of every for/tablerow body, and each
// tick spends one unit of the render's budget and checks its deadline. A
// render that runs out fails with a RenderError (the card blocks as
// invalid_input) instead of hanging the dispatcher.
const (
	// MaxLoopIterations bounds the loop iterations of one render, all loops
	// together.
	MaxLoopIterations = 100_000
	// MaxRenderTime bounds the time one render may spend in loops.
	MaxRenderTime = 10 * time.Second
)

const (
	loopTick  = "drover_loop_tick"
	budgetVar = "\x00drover_render_budget" // not a Liquid identifier: templates cannot read it
)

type renderBudget struct {
	left     int
	deadline time.Time
}

func tickLoop(ctx render.Context) (string, error) {
	b, _ := ctx.Bindings()[budgetVar].(*renderBudget)
	if b == nil {
		return "", nil
	}
	b.left--
	if b.left < 0 {
		return "", fmt.Errorf("the template's loops ran more than %d times for this card; a loop over card data (spec, labels) is too long or nested", MaxLoopIterations)
	}
	if time.Now().After(b.deadline) {
		return "", fmt.Errorf("rendering took longer than %v for this card; a loop over card data (spec, labels) is too long or nested", MaxRenderTime)
	}
	return "", nil
}

var (
	tagTok  = regexp.MustCompile(`\{\{(?:[^}]|\}[^}])*?\}\}|\{%-?\s*(\w*)(?:[^%]|%[^}])*?%\}`)
	endSkip = map[string]string{"raw": "endraw", "comment": "endcomment"}
)

// instrumentLoops inserts the loop tick after every for/tablerow tag outside
// raw and comment blocks, keeping a right trim ({% for … -%}) in effect. It
// returns the source and how many ticks it inserted.
func instrumentLoops(src string) (string, int) {
	var b strings.Builder
	n, last, skipUntil := 0, 0, ""
	for _, m := range tagTok.FindAllStringSubmatchIndex(src, -1) {
		if m[2] < 0 {
			continue // an object: {{ "{% for %}" }} prints a string
		}
		name := src[m[2]:m[3]]
		switch {
		case skipUntil != "":
			if name == skipUntil {
				skipUntil = ""
			}
		case endSkip[name] != "":
			skipUntil = endSkip[name]
		case name == "for" || name == "tablerow":
			tag := src[m[0]:m[1]]
			b.WriteString(src[last:m[1]])
			if strings.HasSuffix(tag, "-%}") {
				b.WriteString("{% " + loopTick + " -%}")
			} else {
				b.WriteString("{% " + loopTick + " %}")
			}
			last = m[1]
			n++
		}
	}
	b.WriteString(src[last:])
	return b.String(), n
}

// countTicked counts the for/tablerow blocks whose body starts with the tick.
func countTicked(n render.Node) (ticked, loops int) {
	switch n := n.(type) {
	case *render.SeqNode:
		for _, ch := range n.Children {
			t, l := countTicked(ch)
			ticked, loops = ticked+t, loops+l
		}
	case *render.BlockNode:
		if n.Name == "for" || n.Name == "tablerow" {
			loops++
			for _, ch := range n.Body {
				if _, trim := ch.(*render.TrimNode); trim {
					continue
				}
				if t, ok := ch.(*render.TagNode); ok && t.Name == loopTick {
					ticked++
				}
				break
			}
		}
		for _, ch := range n.Body {
			t, l := countTicked(ch)
			ticked, loops = ticked+t, loops+l
		}
		for _, cl := range n.Clauses {
			t, l := countTicked(cl)
			ticked, loops = ticked+t, loops+l
		}
	}
	return ticked, loops
}

// compilePrompt compiles cfg.Prompt strictly: a syntax error, an unknown tag,
// variable, field or filter is a load-time problem naming it.
func compilePrompt(d *decoder, cfg *Config) {
	if strings.TrimSpace(cfg.Prompt) == "" {
		cfg.Prompt, cfg.PromptLine = DefaultPrompt, 0
	}
	eng := newEngine()
	src, ticks := instrumentLoops(cfg.Prompt)
	tmpl, err := parseTemplate(eng, src, cfg.PromptLine)
	if err == nil {
		if t, l := countTicked(tmpl.GetRoot()); t != l || t != ticks {
			d.probs = append(d.probs, Problem{Line: cfg.PromptLine, Path: "prompt", Msg: "drover could not bound the template's loops (a for tag it cannot find its body); write each {% for %} tag plainly, e.g. {% for x in card.labels %}"})
			return
		}
	} else {
		// Report the operator's own source, not the instrumented one.
		_, err = parseTemplate(newEngine(), cfg.Prompt, cfg.PromptLine)
		if err == nil {
			err = errors.New("the template does not compile")
		}
	}
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
	vars[budgetVar] = &renderBudget{left: MaxLoopIterations, deadline: time.Now().Add(MaxRenderTime)}
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
