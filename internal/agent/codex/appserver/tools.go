package appserver

import (
	"encoding/json"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
)

// Dynamic tools: the functions drover offers the model on the thread
// (thread/start dynamicTools; experimental in 0.171.0, so initialize asks
// for experimentalApi). Their names are those of drover's MCP tools.
// drover_card, drover_ask_human and drover_done are answered by the
// session itself (the card it was given; a park; the end of the turns);
// drover_block, drover_comment and drover_progress write to the store
// through the run's Calls (agentcall.Service, the fenced service drover
// mcp serves) and are offered only when the run has them. After them come
// the dispatcher's extra tools (Options.Tools: on a Linear board,
// Symphony's linear_graphql), each answered by its own Call.
const (
	ToolCard     = "drover_card"
	ToolAskHuman = "drover_ask_human"
	ToolDone     = "drover_done"
	ToolBlock    = "drover_block"
	ToolComment  = "drover_comment"
	ToolProgress = "drover_progress"
)

func dynamicTools(withCalls bool, extra []agent.Tool) []any {
	fn := func(name, desc string, props map[string]any, required ...string) any {
		schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			schema["required"] = required
		}
		return map[string]any{"type": "function", "name": name, "description": desc, "inputSchema": schema}
	}
	str := func(desc string) any { return map[string]any{"type": "string", "description": desc} }
	tools := []any{
		fn(ToolCard, "The drover card this run works on: identifier, title, body, state, labels, priority and spec.", map[string]any{}),
		fn(ToolAskHuman, "Ask a human a question you cannot answer from the workspace. The run stops and the card waits for the answer, which arrives as your next message on this thread.",
			map[string]any{"question": str("the question, with the options you see"), "options": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}, "question"),
		fn(ToolDone, "Say the card's work is finished, with a summary for the reviewer. drover starts no further turn.",
			map[string]any{"summary": str("what was done, for the reviewer")}, "summary"),
	}
	if withCalls {
		tools = append(tools,
			fn(ToolBlock, "Block the card: it cannot be done as written. Say what is wrong, where, and how a human can continue. The card is blocked with your words and is not retried. Block once, then end your turn.",
				map[string]any{"what": str("what is wrong"), "where": str("where: a file, a spec field, a URL"), "how": str("how a human can fix it so the card can go on")}, "what", "where", "how"),
			fn(ToolComment, "Add a comment to the card, shown live to the people watching it.",
				map[string]any{"text": str("the comment")}, "text"),
			fn(ToolProgress, "Note progress in one line; shown live on the card and in the event log.",
				map[string]any{"note": str("one line")}, "note"),
		)
	}
	for _, t := range extra {
		if ownTool(t.Name) {
			continue
		}
		tools = append(tools, map[string]any{"type": "function", "name": t.Name, "description": t.Description, "inputSchema": t.InputSchema})
	}
	return tools
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
	if t := s.extraTool(p.Tool); t != nil {
		s.extraCall(t, p.Arguments, ok, bad)
		return
	}
	var args struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
		Summary  string   `json:"summary"`
		What     string   `json:"what"`
		Where    string   `json:"where"`
		How      string   `json:"how"`
		Text     string   `json:"text"`
		Note     string   `json:"note"`
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
	case ToolBlock, ToolComment, ToolProgress:
		s.storeCall(p.Tool, args.What, args.Where, args.How, args.Text, args.Note, ok, bad)
	default:
		bad("drover offers no tool named " + p.Tool)
	}
}

// storeCall answers the tools that write to the store, through the run's
// Calls: a refusal (bad arguments, a run drover no longer holds) is the
// tool's failure with the service's words, for the model to read.
func (s *session) storeCall(tool, what, where, how, text, note string, ok, bad func(string)) {
	if s.o.Calls == nil {
		bad("drover offers no tool named " + tool + " to this run")
		return
	}
	var err error
	switch tool {
	case ToolBlock:
		if _, err = s.o.Calls.Block(s.ctx, what, where, how); err == nil {
			// Like drover_done, a block ends the run's turns: the card is
			// the human's now (the run ends agent_blocked with the report).
			s.done = true
			ok("recorded: drover blocks the card with your reason and starts no further turn. End your turn now.")
		}
	case ToolComment:
		if _, err = s.o.Calls.Comment(s.ctx, text); err == nil {
			ok("commented on the card.")
		}
	case ToolProgress:
		if _, err = s.o.Calls.Progress(s.ctx, note); err == nil {
			ok("recorded.")
		}
	}
	if err != nil {
		bad(err.Error())
	}
}

// extraTool is the dispatcher's tool of that name, or nil. drover's own
// names come first: an extra tool cannot shadow them.
func (s *session) extraTool(name string) *agent.Tool {
	if ownTool(name) {
		return nil
	}
	for i := range s.o.Tools {
		if s.o.Tools[i].Name == name {
			return &s.o.Tools[i]
		}
	}
	return nil
}

func ownTool(name string) bool {
	switch name {
	case ToolCard, ToolAskHuman, ToolDone, ToolBlock, ToolComment, ToolProgress:
		return true
	}
	return false
}

// extraCall answers a call of a dispatcher's tool: its text, or its
// error's words as a failed result.
func (s *session) extraCall(t *agent.Tool, args json.RawMessage, ok, bad func(string)) {
	if t.Call == nil {
		bad("drover offers no tool named " + t.Name + " to this run")
		return
	}
	out, err := t.Call(s.ctx, args)
	if err != nil {
		bad(err.Error())
		return
	}
	ok(out)
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}
