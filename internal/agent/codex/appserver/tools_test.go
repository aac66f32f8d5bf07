package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
)

// toolAnswers are drover's answers to the fake's requests, in order.
func (r run) toolAnswers() []string {
	var out []string
	for _, m := range r.sent {
		if m.isResponse() && m.Result != nil {
			out = append(out, string(m.Result))
		}
	}
	return out
}

// TestExtraToolOffered: a tool of the Invocation is offered after drover's
// own with its schema; a call of it reaches its Call with the model's
// arguments and its text goes back as a successful result, its error as a
// failed result with the error's words.
func TestExtraToolOffered(t *testing.T) {
	var got []string
	tool := agent.Tool{Name: "linear_graphql", Description: "Linear GraphQL",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []string{"query"}},
		Call: func(_ context.Context, args json.RawMessage) (string, error) {
			got = append(got, string(args))
			if strings.Contains(string(args), "bad") {
				return "", errors.New("Linear said: Cannot query field bad")
			}
			return `{"data":{"viewer":{"id":"u1"}}}`, nil
		}}
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{
		{Tool: "linear_graphql", Args: json.RawMessage(`{"query":"query { viewer { id } }"}`)},
		{Tool: "linear_graphql", Args: json.RawMessage(`{"query":"query { bad }"}`)},
	}}}, runOpts{inv: func(inv *agent.Invocation) { inv.Tools = []agent.Tool{tool} }})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if strings.Join(got, "|") != `{"query":"query { viewer { id } }"}|{"query":"query { bad }"}` {
		t.Errorf("Call got %q", got)
	}
	if o := strings.Join(r.offered(t), ","); o != "drover_card,drover_ask_human,drover_done,linear_graphql" {
		t.Errorf("offered %s", o)
	}
	var p struct {
		DynamicTools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"dynamicTools"`
	}
	r.param(t, "thread/start", &p)
	if s := p.DynamicTools[len(p.DynamicTools)-1].InputSchema; s["required"] == nil || s["properties"] == nil {
		t.Errorf("linear_graphql schema %v", s)
	}
	var answers []string
	for _, a := range r.toolAnswers() {
		if strings.Contains(a, "contentItems") {
			answers = append(answers, a)
		}
	}
	if len(answers) != 2 || !strings.Contains(answers[0], `"success":true`) || !strings.Contains(answers[0], `viewer`) ||
		!strings.Contains(answers[1], `"success":false`) || !strings.Contains(answers[1], "Cannot query field bad") {
		t.Errorf("answers %q", answers)
	}
}

// TestExtraToolCannotShadow: an extra tool named like one of drover's own
// is neither offered twice nor called; drover's own answers.
func TestExtraToolCannotShadow(t *testing.T) {
	called := false
	tool := agent.Tool{Name: ToolDone, Call: func(context.Context, json.RawMessage) (string, error) { called = true; return "x", nil }}
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{{Tool: ToolDone, Args: json.RawMessage(`{"summary":"ok"}`)}}}},
		runOpts{inv: func(inv *agent.Invocation) { inv.Tools = []agent.Tool{tool} }})
	if called || r.res.Signals.Structured.ResultText != "ok" {
		t.Errorf("called %v, result %s", called, r.res.Signals.Structured.ResultText)
	}
	if o := strings.Join(r.offered(t), ","); o != "drover_card,drover_ask_human,drover_done" {
		t.Errorf("offered %s", o)
	}
}
