package appserver

import (
	"encoding/json"
	"strings"
)

// Dynamic tools: the functions drover offers the model on the thread
// (thread/start dynamicTools; experimental in 0.171.0, so initialize asks
// for experimentalApi). Their names are those of drover's MCP tools. Not
// offered yet: drover_block, drover_comment and drover_progress (they
// write to the store, which the MCP server owns) and Symphony's
// linear_graphql (drover has no Linear board yet).
const (
	ToolCard     = "drover_card"
	ToolAskHuman = "drover_ask_human"
	ToolDone     = "drover_done"
)

func dynamicTools() []any {
	fn := func(name, desc string, props map[string]any, required ...string) any {
		schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			schema["required"] = required
		}
		return map[string]any{"type": "function", "name": name, "description": desc, "inputSchema": schema}
	}
	str := func(desc string) any { return map[string]any{"type": "string", "description": desc} }
	return []any{
		fn(ToolCard, "The drover card this run works on: identifier, title, body, state, labels, priority and spec.", map[string]any{}),
		fn(ToolAskHuman, "Ask a human a question you cannot answer from the workspace. The run stops and the card waits for the answer, which arrives as your next message on this thread.",
			map[string]any{"question": str("the question, with the options you see"), "options": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}, "question"),
		fn(ToolDone, "Say the card's work is finished, with a summary for the reviewer. drover starts no further turn.",
			map[string]any{"summary": str("what was done, for the reviewer")}, "summary"),
	}
}

// toolCall answers item/tool/call.
func (s *session) toolCall(m message) {
	var p struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	ok := func(text string) {
		_ = s.c.respond(m.ID, map[string]any{"contentItems": []any{map[string]any{"type": "inputText", "text": text}}, "success": true})
	}
	bad := func(text string) {
		_ = s.c.respond(m.ID, map[string]any{"contentItems": []any{map[string]any{"type": "inputText", "text": text}}, "success": false})
	}
	var args struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
		Summary  string   `json:"summary"`
	}
	if len(p.Arguments) > 0 && json.Unmarshal(p.Arguments, &args) != nil {
		bad("the arguments are not a JSON object of the tool's parameters")
		return
	}
	switch p.Tool {
	case ToolCard:
		c := s.o.Card
		b, _ := json.Marshal(map[string]any{"identifier": c.Identifier, "title": c.Title, "body": c.Body, "state": c.State,
			"labels": c.Labels, "priority": c.Priority, "spec": json.RawMessage(orNull(c.Spec))})
		ok(string(b))
	case ToolAskHuman:
		q := strings.TrimSpace(args.Question)
		if q == "" {
			bad("question is empty: say what you need a human to decide")
			return
		}
		if len(args.Options) > 0 {
			q += " Options: " + strings.Join(args.Options, "; ")
		}
		ok("drover parks the card with your question; the human's answer will be your next message on this thread. Stop here.")
		s.park(q, requestTurn(m.Params))
	case ToolDone:
		s.done = true
		s.st.summary = strings.TrimSpace(args.Summary)
		ok("recorded; drover starts no further turn. End your turn now.")
	default:
		bad("drover offers no tool named " + p.Tool)
	}
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}
