package appserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/excerpt"
)

// serverRequest answers what the app-server asks the client: approvals
// (per the profile's approval_policy), a question for the user (parks the
// card), a dynamic tool call (drover's operations). Anything else gets a
// JSON-RPC "method not found", which the app-server reports to the model
// as a failed call.
func (s *session) serverRequest(m message) {
	switch m.Method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		s.approval(m, func(ok bool) any {
			if ok {
				return map[string]any{"decision": "acceptForSession"}
			}
			return map[string]any{"decision": "decline"}
		})
	case "execCommandApproval", "applyPatchApproval": // the v1 shapes
		s.approval(m, func(ok bool) any {
			if ok {
				return map[string]any{"decision": "approved_for_session"}
			}
			return map[string]any{"decision": map[string]any{"denied": map[string]any{"rejection": declined}}}
		})
	case "item/permissions/requestApproval":
		var p struct {
			Permissions json.RawMessage `json:"permissions"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.approval(m, func(ok bool) any {
			if ok && len(p.Permissions) > 0 {
				return map[string]any{"permissions": p.Permissions, "scope": "turn"}
			}
			return map[string]any{"permissions": map[string]any{}, "scope": "turn"}
		})
	case "mcpServer/elicitation/request":
		_ = s.c.respond(m.ID, map[string]any{"action": "decline", "content": nil, "_meta": nil})
	case "item/tool/requestUserInput":
		// Not answered: interrupting the turn resolves it (0.171.0 ends
		// the turn "interrupted" and the model sees the call aborted).
		q := userInputQuestion(m.Params)
		if q == "" {
			q = "the agent asked for input (request_user_input) without a readable question"
		}
		s.park(q, requestTurn(m.Params))
	case "item/tool/call":
		s.toolCall(m)
	default:
		_ = s.c.fail(m.ID, codeMethodNotFound, fmt.Sprintf("drover does not answer %s", m.Method))
	}
}

// requestTurn is the turn a server request belongs to ("" when it names
// none): a request can come before drover has read turn/start's answer.
func requestTurn(params json.RawMessage) string {
	var p struct {
		TurnID string `json:"turnId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.TurnID
}

// declined is the reason drover gives the model for a declined approval.
const declined = "drover runs unattended and approves nothing unless the profile's approval_policy is never"

// Approves reports whether drover accepts the app-server's approval
// requests under approval policy p: only "never" (the operator chose to be
// asked nothing, so a request that comes anyway is accepted for the
// session). Under any other policy, or none, drover cannot ask a human in
// the middle of a turn: it declines, the model is told so, and the denial
// is recorded (a run that ends after a denial parks with what was denied,
// as a Claude permission denial does).
func Approves(p any) bool {
	s, ok := p.(string)
	return ok && s == "never"
}

func (s *session) approval(m message, answer func(ok bool) any) {
	ok := Approves(s.o.ApprovalPolicy)
	if !ok {
		st := &s.st.s
		st.PermissionDenials++
		if what := approvalSubject(m); what != "" && len(st.DeniedTools) < maxKept {
			st.DeniedTools = append(st.DeniedTools, what)
		}
	}
	_ = s.c.respond(m.ID, answer(ok))
}

// approvalSubject is what an approval request asks for, for the record.
func approvalSubject(m message) string {
	var p struct {
		Command any    `json:"command"` // a string (v2) or an argv (v1)
		Reason  string `json:"reason"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch c := p.Command.(type) {
	case string:
		return excerpt.Clip("command: "+c, 200)
	case []any:
		parts := make([]string, 0, len(c))
		for _, a := range c {
			parts = append(parts, fmt.Sprint(a))
		}
		return excerpt.Clip("command: "+strings.Join(parts, " "), 200)
	}
	if strings.Contains(m.Method, "ileChange") || m.Method == "applyPatchApproval" {
		return "file change"
	}
	if strings.Contains(m.Method, "permissions") {
		return excerpt.Clip("permissions: "+p.Reason, 200)
	}
	return m.Method
}
