package appserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// The test binary is also a scripted codex app-server: with
// fakeScriptVar set it reads JSON-RPC on stdin, answers as codex 0.171.0
// does (shapes from `codex app-server generate-ts` and the transcripts in
// doc.go), logs every message it got to fakeLogVar's file, and exits at
// end of input.
const (
	fakeScriptVar = "DROVER_FAKE_APPSERVER_SCRIPT"
	fakeLogVar    = "DROVER_FAKE_APPSERVER_LOG"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(fakeScriptVar); s != "" {
		os.Exit(fakeServer(s, os.Getenv(fakeLogVar)))
	}
	os.Exit(m.Run())
}

// fakeScript says what the fake does: the steps of each turn (the last
// list repeats), and how it answers the thread methods.
type fakeScript struct {
	Turns       [][]fakeStep `json:"turns"`
	ThreadError string       `json:"thread_error,omitempty"` // thread/start and thread/resume fail with it
	ExitAtTurn  int          `json:"exit_at_turn,omitempty"` // exit 0 when turn N starts, mid-conversation
	Garbage     bool         `json:"garbage,omitempty"`      // print a line that is not JSON first
	OldTokens   int64        `json:"old_tokens,omitempty"`   // a resumed thread first reports this many input tokens of an old turn
}

// fakeStep is one thing a turn does.
type fakeStep struct {
	Message string          `json:"message,omitempty"` // an agent message
	Tokens  int64           `json:"tokens,omitempty"`  // input tokens used (the thread total grows by it; output by 1)
	Fail    json.RawMessage `json:"fail,omitempty"`    // the turn fails with this TurnError
	Retry   string          `json:"retry,omitempty"`   // an error notification with willRetry
	Ask     string          `json:"ask,omitempty"`     // request_user_input; the turn waits for turn/interrupt
	Approve string          `json:"approve,omitempty"` // a command approval; the decision becomes a message
	Tool    string          `json:"tool,omitempty"`    // a dynamic tool call (arguments in Args); the answer becomes a message
	Args    json.RawMessage `json:"args,omitempty"`
	Rate    json.RawMessage `json:"rate,omitempty"` // account/rateLimits/updated rateLimits
}

func fakeServer(script, logPath string) int {
	var sc fakeScript
	if err := json.Unmarshal([]byte(script), &sc); err != nil {
		fmt.Fprintln(os.Stderr, "fake app-server: bad script:", err)
		return 2
	}
	logf, _ := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 8<<20)
	read := func() (message, bool) {
		for in.Scan() {
			if logf != nil {
				logf.Write(append(in.Bytes(), '\n'))
			}
			var m message
			if json.Unmarshal(in.Bytes(), &m) == nil {
				return m, true
			}
		}
		return message{}, false
	}
	if sc.Garbage {
		fmt.Fprintln(os.Stdout, "WARNING: not a message")
	}
	const tid = "thr-fake"
	var total int64
	turn, nextReq := 0, 100
	// await reads until the response to the server's request id, answering
	// nothing else (drover sends nothing else mid-step but turn/interrupt).
	await := func(id int) (json.RawMessage, bool) {
		for {
			m, ok := read()
			if !ok {
				return nil, false
			}
			if m.isResponse() && string(m.ID) == fmt.Sprint(id) {
				return m.Result, true
			}
			if m.Method == "turn/interrupt" {
				send(map[string]any{"id": m.ID, "result": map[string]any{}})
				return nil, true
			}
		}
	}
	for {
		m, ok := read()
		if !ok {
			return 0
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"id": m.ID, "result": map[string]any{"userAgent": "fake/0.171.0", "codexHome": "/tmp", "platformFamily": "unix", "platformOs": "linux"}})
		case "thread/start", "thread/resume":
			if sc.ThreadError != "" {
				send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32600, "message": sc.ThreadError}})
				continue
			}
			id := tid
			if m.Method == "thread/resume" {
				var p struct {
					ThreadID string `json:"threadId"`
				}
				json.Unmarshal(m.Params, &p)
				id = p.ThreadID
				if sc.OldTokens > 0 {
					total = sc.OldTokens
					send(map[string]any{"method": "thread/tokenUsage/updated", "params": map[string]any{"threadId": id, "turnId": "old-turn",
						"tokenUsage": map[string]any{"total": map[string]any{"inputTokens": total, "outputTokens": 0}}}})
				}
			}
			send(map[string]any{"id": m.ID, "result": map[string]any{"thread": map[string]any{"id": id}}})
		case "turn/start":
			turn++
			if sc.ExitAtTurn == turn {
				return 0
			}
			turnID := fmt.Sprintf("turn-%d", turn)
			send(map[string]any{"id": m.ID, "result": map[string]any{"turn": map[string]any{"id": turnID, "status": "inProgress"}}})
			send(map[string]any{"method": "turn/started", "params": map[string]any{"threadId": tid, "turn": map[string]any{"id": turnID, "status": "inProgress"}}})
			steps := sc.Turns[min(turn, len(sc.Turns))-1]
			status, turnErr := "completed", json.RawMessage("null")
			for _, st := range steps {
				switch {
				case st.Message != "":
					send(map[string]any{"method": "item/completed", "params": map[string]any{"threadId": tid, "turnId": turnID, "item": map[string]any{"type": "agentMessage", "id": "msg", "text": st.Message}}})
				case st.Tokens > 0:
					total += st.Tokens
					send(map[string]any{"method": "thread/tokenUsage/updated", "params": map[string]any{"threadId": tid, "turnId": turnID,
						"tokenUsage": map[string]any{"total": map[string]any{"inputTokens": total, "outputTokens": turn}, "last": map[string]any{"inputTokens": st.Tokens}}}})
				case st.Rate != nil:
					send(map[string]any{"method": "account/rateLimits/updated", "params": map[string]any{"rateLimits": st.Rate}})
				case st.Retry != "":
					send(map[string]any{"method": "error", "params": map[string]any{"error": map[string]any{"message": st.Retry, "codexErrorInfo": nil}, "willRetry": true, "threadId": tid, "turnId": turnID}})
				case st.Fail != nil:
					send(map[string]any{"method": "error", "params": map[string]any{"error": st.Fail, "willRetry": false, "threadId": tid, "turnId": turnID}})
					status, turnErr = "failed", st.Fail
				case st.Ask != "":
					nextReq++
					send(map[string]any{"id": nextReq, "method": "item/tool/requestUserInput", "params": map[string]any{"threadId": tid, "turnId": turnID, "itemId": "call-1", "isBlocking": false,
						"questions": []any{map[string]any{"id": "q", "header": "Env", "question": st.Ask, "isOther": true, "isSecret": false,
							"options": []any{map[string]any{"label": "staging", "description": "deploy to staging"}, map[string]any{"label": "production", "description": "deploy to production"}}}}}})
					if _, ok := await(-1); !ok {
						return 0
					}
					status = "interrupted"
				case st.Approve != "":
					nextReq++
					send(map[string]any{"id": nextReq, "method": "item/commandExecution/requestApproval", "params": map[string]any{"threadId": tid, "turnId": turnID, "itemId": "call-2", "command": st.Approve}})
					res, ok := await(nextReq)
					if !ok {
						return 0
					}
					send(map[string]any{"method": "item/completed", "params": map[string]any{"threadId": tid, "turnId": turnID, "item": map[string]any{"type": "agentMessage", "text": "decision " + string(res)}}})
				case st.Tool != "":
					nextReq++
					send(map[string]any{"id": nextReq, "method": "item/tool/call", "params": map[string]any{"threadId": tid, "turnId": turnID, "callId": "call-3", "tool": st.Tool, "arguments": st.Args}})
					res, ok := await(nextReq)
					if !ok {
						return 0
					}
					if res == nil { // interrupted while the call was out
						status = "interrupted"
						break
					}
					send(map[string]any{"method": "item/completed", "params": map[string]any{"threadId": tid, "turnId": turnID, "item": map[string]any{"type": "agentMessage", "text": "tool said " + string(res)}}})
				}
				if status == "interrupted" {
					break
				}
			}
			send(map[string]any{"method": "turn/completed", "params": map[string]any{"threadId": tid, "turn": map[string]any{"id": turnID, "status": status, "error": turnErr}}})
		case "turn/interrupt":
			send(map[string]any{"id": m.ID, "result": map[string]any{}})
		}
	}
}
