package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

// Options is one run's conversation.
type Options struct {
	Cwd    string // the workspace: the thread's working directory
	Prompt string // the first turn's input
	// Resume is the thread to continue (the session id of the run that
	// parked); "" starts a new thread.
	Resume string
	// MaxTurns caps the turns of the run (dispatch.max_turns); < 1 is one.
	MaxTurns int
	// Continue is asked after each turn that ended well; nil = one turn.
	Continue func(ctx context.Context) bool
	// Sent with thread/start (approvalPolicy, sandbox) and turn/start
	// (sandboxPolicy); nil/"" leaves Codex's own configuration in charge.
	ApprovalPolicy    any
	Sandbox           string
	TurnSandboxPolicy any
	// Model and ServiceTier are sent with thread/start and thread/resume
	// (model, serviceTier), Effort with turn/start (effort); "" sends none.
	Model, Effort, ServiceTier string
	Card                       board.Card // what drover_card answers
	// Calls write the agent's reports to the store (drover_block,
	// drover_comment, drover_progress); nil offers none of those tools.
	Calls agent.Calls
	// Tools are the dispatcher's extra dynamic tools (agent.Invocation's
	// Tools), offered after drover's own and answered by their Call.
	Tools         []agent.Tool
	ClientVersion string // clientInfo.version
	// Changed, when set, is called after a message changed what the run
	// shows (on the reading goroutine; it must be quick).
	Changed func()
}

// errEnded is the app-server's output ending (the process exited or was
// stopped) before the conversation did.
var errEnded = errors.New("codex app-server exited before the conversation ended")

// ConfigError is the app-server refusing the profile's settings (a JSON-RPC
// error answering initialize, thread/start or thread/resume): a
// config_error, fixed in the profile.
type ConfigError struct {
	Method string
	Err    error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("codex app-server refused %s: %v; check the profile's approval_policy, thread_sandbox, turn_sandbox_policy, model and service_tier", e.Method, e.Err)
}

// Unwrap makes a ConfigError an agent.ErrConfig.
func (e *ConfigError) Unwrap() []error { return []error{agent.ErrConfig, e.Err} }

// session is one conversation with an app-server: initialize, one thread,
// its turns. It reads messages from in (stdout lines; closed when the
// process's output ends) and writes to c. Not safe for concurrent use.
type session struct {
	c   *conn
	ctx context.Context // the run's, for the store calls of the tools
	in  <-chan []byte
	o   Options
	st  *state
	tid string // the thread

	// Set while a turn runs.
	turnID     string
	turnStatus string // "" until turn/completed
	parking    bool   // a question was asked: the turn is being interrupted
	done       bool   // drover_done was called
}

func newSession(w io.Writer, in <-chan []byte, o Options) *session {
	return &session{c: &conn{w: w}, in: in, o: o, st: newState()}
}

// run holds the whole conversation. Its error is nil when the
// conversation ended as drover meant it to (the turns ran, or a question
// parked it); errEnded, a *ConfigError, or a write error otherwise. What
// the turns did is in s.st either way.
func (s *session) run(ctx context.Context) error {
	s.ctx = ctx
	if _, err := s.call("initialize", map[string]any{
		"clientInfo": map[string]any{"name": "drover", "title": "drover", "version": s.o.ClientVersion},
		"capabilities": map[string]any{
			// dynamicTools and request_user_input are experimental in 0.171.0.
			"experimentalApi":           true,
			"optOutNotificationMethods": quietNotifications,
		},
	}); err != nil {
		return err
	}
	s.st.s.Present = true
	if err := s.c.notify("initialized", nil); err != nil {
		return err
	}
	if err := s.openThread(); err != nil {
		return err
	}
	max := s.o.MaxTurns
	if max < 1 {
		max = 1
	}
	for n := 1; ; n++ {
		text := s.o.Prompt
		if n > 1 {
			text = continuation(s.o.Card, n, max)
		}
		if err := s.turn(text); err != nil {
			return err
		}
		if s.turnStatus != "completed" || s.parking || s.done || s.asked() || n >= max || s.o.Continue == nil || !s.o.Continue(ctx) {
			return nil
		}
	}
}

// asked reports whether the turn's last message ends with drover's
// QUESTION: line: the agent stopped for a human, so no continuation turn
// may answer for them (the run ends and is classified input_required).
func (s *session) asked() bool {
	_, ok := policy.QuestionLine(s.st.lastMessage)
	return ok
}

// quietNotifications are the streaming deltas drover does not read; opting
// out keeps the run log to whole items.
var quietNotifications = []string{
	"item/agentMessage/delta", "item/plan/delta", "item/reasoning/summaryTextDelta",
	"item/reasoning/summaryPartAdded", "item/reasoning/textDelta", "item/commandExecution/outputDelta",
	"item/fileChange/outputDelta", "command/exec/outputDelta", "process/outputDelta",
}

// openThread starts the run's thread, or resumes the parked one.
func (s *session) openThread() error {
	params := map[string]any{"cwd": s.o.Cwd}
	if s.o.ApprovalPolicy != nil {
		params["approvalPolicy"] = s.o.ApprovalPolicy
	}
	if s.o.Sandbox != "" {
		params["sandbox"] = s.o.Sandbox
	}
	if s.o.Model != "" {
		params["model"] = s.o.Model
	}
	if s.o.ServiceTier != "" {
		params["serviceTier"] = s.o.ServiceTier
	}
	method := "thread/start"
	if s.o.Resume != "" {
		method = "thread/resume"
		params["threadId"] = s.o.Resume
		params["excludeTurns"] = true
	} else {
		params["config"] = map[string]any{
			// The request_user_input tool outside plan mode (0.171.0
			// feature "default_mode_request_user_input", under
			// development): how the agent asks drover's human.
			"features.default_mode_request_user_input": true,
			"suppress_unstable_features_warning":       true,
		}
		params["dynamicTools"] = dynamicTools(s.o.Calls != nil, s.o.Tools)
	}
	res, err := s.call(method, params)
	if err != nil {
		return err
	}
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if json.Unmarshal(res, &r) != nil || r.Thread.ID == "" {
		return &ConfigError{Method: method, Err: fmt.Errorf("the answer names no thread: %s", excerpt.Clip(string(res), 200))}
	}
	s.tid = r.Thread.ID
	s.st.s.SessionID = s.tid
	return nil
}

// turn runs one turn to its turn/completed.
func (s *session) turn(text string) error {
	params := map[string]any{"threadId": s.tid, "input": []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}}
	if s.o.TurnSandboxPolicy != nil {
		params["sandboxPolicy"] = s.o.TurnSandboxPolicy
	}
	if s.o.Effort != "" {
		params["effort"] = s.o.Effort
	}
	s.turnID, s.turnStatus, s.st.lastMessage = "", "", ""
	res, err := s.call("turn/start", params)
	if err != nil {
		var re *rpcError
		if errors.As(err, &re) {
			// A refused turn (bad sandbox policy, an unknown thread): the
			// run failed and says why.
			s.st.s.IsError, s.st.s.Finished = true, true
			s.st.addError("turn/start: " + re.Message)
			return nil
		}
		return err
	}
	var r struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(res, &r)
	if r.Turn.ID != "" {
		s.startTurn(r.Turn.ID)
	}
	for s.turnStatus == "" {
		if err := s.next(); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) startTurn(id string) {
	if s.turnID == "" {
		s.turnID = id
		s.st.turns[id] = true
		s.st.s.Turns++
	}
}

// call sends a request and reads messages until its answer. A JSON-RPC
// error answering initialize or a thread method is a *ConfigError; for
// other methods it is the *rpcError.
func (s *session) call(method string, params any) (json.RawMessage, error) {
	id, err := s.c.request(method, params)
	if err != nil {
		return nil, err
	}
	for {
		m, err := s.read()
		if err != nil {
			return nil, err
		}
		if m.isResponse() && string(m.ID) == id {
			if m.Error != nil {
				if method == "turn/start" {
					return nil, m.Error
				}
				return nil, &ConfigError{Method: method, Err: m.Error}
			}
			return m.Result, nil
		}
		s.handle(m)
	}
}

// next reads and handles one message.
func (s *session) next() error {
	m, err := s.read()
	if err != nil {
		return err
	}
	s.handle(m)
	return nil
}

// read returns the next message, skipping (and recording) lines that are
// not messages.
func (s *session) read() (message, error) {
	for line := range s.in {
		m, ok, why := decode(line)
		if ok {
			return m, nil
		}
		if why != "" {
			s.st.bad.Add(why, line)
		}
	}
	return message{}, errEnded
}

// handle acts on a notification, a server request, or a response drover
// does not wait for (turn/interrupt's).
func (s *session) handle(m message) {
	defer func() {
		if s.o.Changed != nil {
			s.o.Changed()
		}
	}()
	switch {
	case m.isRequest():
		s.serverRequest(m)
	case m.isNotification():
		s.notification(m)
	}
}

func (s *session) notification(m message) {
	switch m.Method {
	case "turn/started":
		var p struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.Turn.ID != "" {
			s.startTurn(p.Turn.ID)
		}
	case "turn/completed":
		s.turnCompleted(m.Params)
	case "item/started", "item/completed":
		s.st.item(m.Method, m.Params)
	case "thread/tokenUsage/updated":
		s.st.tokenUsage(m.Params)
	case "account/rateLimits/updated":
		s.st.rateLimits(m.Params)
	case "error":
		s.st.errorNotice(m.Params)
	case "warning":
		var p struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.st.warn(p.Message)
		}
	case "configWarning":
		var p struct {
			Summary string `json:"summary"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.st.warn(p.Summary)
		}
	}
}

// turnCompleted ends the current turn with its status: completed,
// interrupted (by drover parking the card, else by someone else) or
// failed with the turn's error.
func (s *session) turnCompleted(params json.RawMessage) {
	var p struct {
		Turn struct {
			ID     string     `json:"id"`
			Status string     `json:"status"`
			Error  *turnError `json:"error"`
		} `json:"turn"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if s.turnID != "" && p.Turn.ID != s.turnID {
		return // an older turn of a resumed thread
	}
	st := &s.st.s
	s.turnStatus = p.Turn.Status
	if s.turnStatus == "" {
		s.turnStatus = "completed"
	}
	st.Finished = true
	switch s.turnStatus {
	case "completed":
		st.ResultText = s.st.lastMessage
	case "failed":
		st.IsError = true
		if p.Turn.Error != nil {
			applyErrorInfo(st, *p.Turn.Error)
			s.st.addError(p.Turn.Error.Message)
		} else {
			s.st.addError("codex app-server: the turn failed without an error")
		}
	case "interrupted":
		if !s.parking {
			st.IsError = true
			s.st.addError("codex app-server: the turn was interrupted")
		}
	}
}

// park records the agent's question and interrupts the turn: the card
// parks with it, and the answer is the next run's first turn on the same
// thread.
func (s *session) park(question, turnID string) {
	st := &s.st.s
	if st.Question == "" {
		st.Question = question
	} else if question != "" {
		st.Question += "\n" + question
	}
	s.st.lastLine = excerpt.Clip("asks: "+question, 200)
	if s.parking {
		return
	}
	s.parking = true
	if turnID == "" {
		turnID = s.turnID
	}
	if turnID != "" {
		_, _ = s.c.request("turn/interrupt", map[string]any{"threadId": s.tid, "turnId": turnID})
	}
}

// userInputQuestion renders a request_user_input request's questions as
// one text: each question with its header and options.
func userInputQuestion(params json.RawMessage) string {
	var p struct {
		Questions []struct {
			Header   string `json:"header"`
			Question string `json:"question"`
			Options  []struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			} `json:"options"`
		} `json:"questions"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var parts []string
	for _, q := range p.Questions {
		t := strings.TrimSpace(q.Question)
		if h := strings.TrimSpace(q.Header); h != "" && !strings.Contains(t, h) {
			t = h + ": " + t
		}
		var opts []string
		for _, o := range q.Options {
			opt := o.Label
			if o.Description != "" {
				opt += " (" + o.Description + ")"
			}
			opts = append(opts, opt)
		}
		if len(opts) > 0 {
			t += " Options: " + strings.Join(opts, "; ")
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "\n")
}

// continuation is the input of turn n (n ≥ 2): the card still wants work.
func continuation(c board.Card, n, max int) string {
	return fmt.Sprintf("Continuation turn %d of %d for %s: the card is still in %s, so the work is not finished. "+
		"Go on from where you stopped; do not repeat what is done. When the work is done, call drover_done with a summary; "+
		"if you cannot go on without a human's decision, ask it (drover_ask_human or request_user_input).",
		n, max, c.Identifier, c.State)
}
