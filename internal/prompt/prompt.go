// Package prompt is the Liquid prompt template of a WORKFLOW.md: compiled
// strictly (an unknown variable, field, filter or tag is a load-time problem),
// bounded (loops over card data cannot hang a render) and rendered per run
// with the card's fields as variables.
package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/osteele/liquid"

	"github.com/drover-dev/drover/internal/board"
)

// Problem is one thing wrong with a template, found when it is compiled. Line
// is the WORKFLOW.md line (0 when unknown).
type Problem struct {
	Line int
	Msg  string
}

// Template is a compiled, checked prompt template.
type Template struct {
	tmpl *liquid.Template
	// comments: the source mentions comments at all; a template that
	// does not cannot read them (Liquid has no computed variable names).
	comments bool
}

// ReadsComments reports whether rendering may read Vars.Conversation's
// comments: false only for a compiled template whose source never names
// them, so a caller can skip looking them up.
func (t *Template) ReadsComments() bool {
	return t == nil || t.comments
}

// Vars are the values one run's prompt is rendered with.
type Vars struct {
	Card      board.Card
	Attempt   int
	RunID     string
	Workspace string
	URL       string // the card's API address ("" when the server is off)
	Agent     string // the profile the card runs on (its own or the default)
	// Conversation is the parked question, the human's answer and the
	// operators' comments since the last attempt (question, answer,
	// comments in the template).
	Conversation Conversation
}

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
{% endif %}{% if answer != "" %}
An earlier attempt stopped to ask a question, and a human answered it.
{% if question != "" %}Question: {{ question }}
{% endif %}Answer: {{ answer }}
Continue with this answer; do not ask the same question again.
{% endif %}{% if comments.size > 0 %}
Comments from the operators since the last attempt:
{% for c in comments %}- {{ c.author }} ({{ c.at }}): {{ c.text }}
{% endfor %}{% endif %}{% if changes.branch != "" and changes.changed == false %}
The last attempt ended without changing anything on the branch
{{ changes.branch }}: no commit and no edited file. This card needs a change
to the repository; make it before you finish.
{% endif %}{% if verify != "" %}
The checks drover ran in the workspace after the last attempt failed; fix what
they found before you finish:
{{ verify }}
{% endif %}{% if review.size > 0 %}{% for r in review %}{% if r.kind == "check" %}
Check ` + "`" + `{{ r.name }}` + "`" + ` failed on PR #{{ pull_request.number }}: {{ r.summary }} ({{ r.url }})
{% endif %}{% endfor %}{% assign asked = false %}{% for r in review %}{% if r.kind != "check" %}{% if asked == false %}
A reviewer asked for changes on PR #{{ pull_request.number }}:
{% assign asked = true %}{% endif %}- {{ r.user }}{% if r.path != "" %} on {{ r.path }}{% if r.line > 0 %} line {{ r.line }}{% endif %}{% endif %}{% if r.state != "" %} ({{ r.state }}){% endif %}: {{ r.body }}
{% endif %}{% endfor %}Address this on the same branch; the next push updates the pull request.
{% endif %}
Work only inside {{ workspace }}.

drover, which runs you, gives you tools (its MCP server "drover"; from a shell,
"$DROVER_BIN" run ask|block|comment|progress|done). Use them to say what happened:
- drover_block(what, where, how) when the card cannot be done as written: what is
  wrong, where (file, field, endpoint), and how a human can fix it. Then stop.
- drover_ask_human(question, options) when only a human can decide: one clear
  question, with the choices if there are some. Then stop; the answer comes back.
- drover_progress(note) for a one-line status now and then, drover_comment(text)
  for findings a human should read.
- drover_done(summary) when the work is done: what you changed and how you
  checked it.
Call drover_card to read the card, earlier attempts and comments again.

Without these tools, say the same in your final message: what you changed and
how you checked it; or, if you cannot continue without a human decision, stop
and end the message with one line that starts with QUESTION: and holds one
clear question, for example:
QUESTION: Should the fix go to staging or to production?
A human answers it, and the next attempt continues with the answer.
`

// Template variables and their fields. card.spec is free-form (the card's
// spec object); every other field is fixed.
var (
	promptRoots = []string{"card", "issue", "attempt", "run", "workspace", "question", "answer", "comments", "verify", "changes", "review", "pull_request"}
	cardFields  = []string{"id", "identifier", "title", "body", "state", "priority", "labels", "agent", "spec", "url", "blocked_by"}
	issueFields = []string{"id", "identifier", "title", "description", "state", "priority", "labels", "url", "blocked_by"}
	runFields   = []string{"id", "attempt"}
	// changesFields: the last attempt's changes to the card's branch
	// (workspace.git); commits is a number.
	changesFields = []string{"branch", "base", "head", "commits", "files", "insertions", "deletions", "dirty", "changed"}
	// pullFields: pull_request. (review is a list of {kind, user, state,
	// body, path, line, name, summary, url}; see reviewBinding.)
	pullFields = []string{"number", "url", "branch", "state", "head_sha"}
	rootFields = map[string][]string{"card": cardFields, "issue": issueFields, "run": runFields, "changes": changesFields,
		"pull_request": pullFields}
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

// Compile compiles src strictly: a syntax error, an unknown tag, variable,
// field or filter is a Problem naming it. line is the WORKFLOW.md line src
// starts on (0 for a template not read from the file). The Template is nil
// when there are problems.
func Compile(src string, line int) (*Template, []Problem) {
	eng := newEngine()
	instrumented, ticks := instrumentLoops(src)
	tmpl, err := parseTemplate(eng, instrumented, line)
	if err == nil {
		if t, l := countTicked(tmpl.GetRoot()); t != l || t != ticks {
			return nil, []Problem{{Line: line, Msg: "drover could not bound the template's loops (a for tag it cannot find its body); write each {% for %} tag plainly, e.g. {% for x in card.labels %}"}}
		}
	} else {
		// Report the operator's own source, not the instrumented one.
		_, err = parseTemplate(newEngine(), src, line)
		if err == nil {
			err = errors.New("the template does not compile")
		}
	}
	if err != nil {
		errLine := 0
		var se liquid.SourceError
		if errors.As(err, &se) {
			errLine = se.LineNumber()
		}
		return nil, []Problem{{Line: errLine, Msg: "template does not compile: " + liquidMsg(err) + " (Liquid syntax: {{ card.title }}, {% if … %}…{% endif %})"}}
	}
	c := &checker{eng: eng, locals: map[string]bool{"forloop": true, "tablerowloop": true}, filterOK: map[string]bool{}, mul: 1}
	c.walk(tmpl.GetRoot())
	for _, r := range c.refs {
		c.check(r)
	}
	if len(c.probs) > 0 {
		return nil, c.probs
	}
	return &Template{tmpl: tmpl, comments: strings.Contains(src, "comments")}, nil
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

// Render renders the prompt for one run. A failure (e.g. the template reads
// card.spec.plan and this card's spec has no plan) is a *RenderError naming
// the variable.
func (t *Template) Render(v Vars) (string, error) {
	if t == nil || t.tmpl == nil {
		return "", &RenderError{Msg: "no compiled template (config was not loaded with Load or Parse)"}
	}
	vars, err := bindings(v)
	if err != nil {
		return "", err
	}
	vars[budgetVar] = &renderBudget{left: MaxLoopIterations, deadline: time.Now().Add(MaxRenderTime)}
	var buf capWriter
	serr, panicked := safeRender(t.tmpl, &buf, vars)
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
func bindings(v Vars) (map[string]any, error) {
	card := v.Card
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
	url, agentName := v.URL, v.Agent
	// issue.* are Symphony's names: for a card mirrored from a tracker they
	// are the issue's own (Linear's ENG-12 and its page), as a Symphony
	// prompt expects; for a card of drover's own board, the card's.
	issueID, issueKey, issueURL := card.ID, card.Identifier, url
	if e := card.External; e != nil {
		issueID, issueKey, issueURL = e.ID, or(e.Key, card.Identifier), or(e.URL, url)
	}
	vars := map[string]any{
		"card": map[string]any{
			"id": card.ID, "identifier": card.Identifier, "title": card.Title, "body": card.Body,
			"state": card.State, "priority": card.Priority, "labels": labels, "agent": agentName,
			"spec": templateValue(spec), "url": url, "blocked_by": blockedBy,
		},
		"issue": map[string]any{
			"id": issueID, "identifier": issueKey, "title": card.Title, "description": card.Body,
			"state": card.State, "priority": card.Priority, "labels": labels, "url": issueURL, "blocked_by": blockedBy,
		},
		"attempt":   v.Attempt,
		"run":       map[string]any{"id": v.RunID, "attempt": v.Attempt},
		"workspace": v.Workspace,
	}
	for k, val := range v.Conversation.bindings() {
		vars[k] = val
	}
	return vars, nil
}

// or is s, or d when s is empty.
func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
