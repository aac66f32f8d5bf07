package prompt

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/osteele/liquid/render"
)

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
