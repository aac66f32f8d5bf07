package opencode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/jsonl"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

const (
	maxKept = 100
)

// Parser accumulates opencode output. The zero value is not ready; use
// NewParser. Not safe for concurrent use.
type Parser struct {
	s        policy.Structured
	lastLine string
	bad      jsonl.Problems // lines that were not events
	// text: the output is not JSON events at all (the first line was not
	// one): opencode printed text (its usage for an argument it refused,
	// or a run without --format json). Its lines are then the output
	// classification reads as text, not bad events.
	text bool
}

// NewParser returns an empty parser.
func NewParser() *Parser { return &Parser{} }

type event struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      *struct {
		Type   string     `json:"type"`
		Text   string     `json:"text"`
		Tool   string     `json:"tool"`
		Reason string     `json:"reason"`
		State  *toolState `json:"state"`
		Tokens *struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
			Cache  struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost *float64 `json:"cost"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message         string            `json:"message"`
			StatusCode      int               `json:"statusCode"`
			IsRetryable     bool              `json:"isRetryable"`
			ResponseHeaders map[string]string `json:"responseHeaders"`
			ResponseBody    string            `json:"responseBody"`
		} `json:"data"`
	} `json:"error"`
}

// toolState is a tool_use part's state: "completed" or "error" (with the
// error text), and the call's input.
type toolState struct {
	Status string          `json:"status"`
	Error  string          `json:"error"`
	Input  json.RawMessage `json:"input"`
}

// Feed reads one stdout line. It never panics; a line that is not a JSON
// event is recorded in Structured().ParseErrors and otherwise ignored,
// unless the output began with text (opencode's usage, a text-mode run):
// then nothing in it is structured, and classification reads the text.
func (p *Parser) Feed(line []byte) {
	defer p.bad.Recover(line)
	if t := bytes.TrimSpace(line); p.text || (!p.s.Present && len(t) > 0 && t[0] != '{') {
		p.text = true
		if len(t) > 0 {
			p.lastLine = excerpt.Clip(string(t), 200)
		}
		return
	}
	var ev event
	if !jsonl.Start(&p.bad, &p.s, line, &ev, func() string { return ev.SessionID }) {
		return
	}
	switch ev.Type {
	case "step_start":
		p.s.Turns++
	case "text":
		if ev.Part != nil && strings.TrimSpace(ev.Part.Text) != "" {
			p.s.ResultText = strings.TrimSpace(ev.Part.Text)
			p.lastLine = excerpt.LastLine(p.s.ResultText, 200)
		}
	case "tool_use":
		if ev.Part != nil {
			p.lastLine = "→ " + ev.Part.Tool
			p.toolUse(ev.Part.Tool, ev.Part.State)
		}
	case "step_finish":
		p.stepFinish(&ev)
	case "error":
		p.errorEvent(&ev)
	}
}

// stepFinish adds one model call's tokens and cost; its reason says how
// the call ended ("stop", "tool-calls", "length", "content-filter").
func (p *Parser) stepFinish(ev *event) {
	part := ev.Part
	if part == nil {
		return
	}
	s := &p.s
	if t := part.Tokens; t != nil {
		s.TokensIn += t.Input + t.Cache.Read + t.Cache.Write
		s.TokensOut += t.Output
	}
	if part.Cost != nil && *part.Cost >= 0 {
		s.CostUSD += *part.Cost
		s.CostKnown = true
	}
	if part.Reason != "tool-calls" {
		s.Finished = true
	}
	switch part.Reason {
	case "stop":
		if s.ErrorType == "max_output_tokens" { // a later call finished the answer
			s.IsError, s.ErrorType = false, ""
		}
	case "content-filter":
		s.IsError, s.StopReason = true, "refusal"
	case "length":
		s.IsError, s.ErrorType = true, "max_output_tokens"
	}
}

// errorEvent reads opencode's error event (the run exits 1 after it): its
// named error (APIError, ContextOverflowError, ContentFilterError,
// ProviderAuthError, MessageOutputLengthError, …), the HTTP status and the
// provider's own error object become the typed signals policy.Classify
// reads.
func (p *Parser) errorEvent(ev *event) {
	s := &p.s
	s.IsError, s.Finished = true, true
	e := ev.Error
	if e == nil {
		return
	}
	p.addError(e.Data.Message)
	switch e.Name {
	case "ContextOverflowError":
		s.TerminalReason = "prompt_too_long"
	case "ContentFilterError":
		s.StopReason = "refusal"
	case "ProviderAuthError":
		s.ErrorType = "authentication_failed"
	case "MessageOutputLengthError":
		s.ErrorType = "max_output_tokens"
	}
	if e.Data.StatusCode != 0 {
		s.APIErrorStatus = e.Data.StatusCode
	}
	if e.Name == "APIError" && e.Data.StatusCode == 0 && e.Data.ResponseBody == "" && len(e.Data.ResponseHeaders) == 0 {
		// An API call that got no HTTP answer at all: opencode wraps the
		// fetch failure ("Cannot connect to API: …"). Evidence: the
		// connection_refused, dns_failure and reset_midstream captures.
		s.APIError = "connection_failed"
	}
	if d, ok := retryAfter(e.Data.ResponseHeaders["retry-after"]); ok {
		s.RetryDelay = d
		if e.Data.IsRetryable && e.Data.StatusCode != 0 {
			// opencode retried with this status, honouring the header,
			// before it gave up (five times in 1.18.33).
			s.RetryStatuses = append(s.RetryStatuses, e.Data.StatusCode)
		}
	}
	p.responseBody(e.Data.ResponseBody)
}

// retryAfter reads an HTTP retry-after header in seconds (opencode keeps
// the provider's response headers on an APIError). A date form is left to
// the message's own words.
func retryAfter(v string) (time.Duration, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 || n > 7*24*3600 {
		return 0, false
	}
	return time.Duration(n * float64(time.Second)), true
}

// codeTypes maps the provider's error type or code (OpenAI: error.code,
// error.type; Anthropic: error.type) to the typed signals, where the name
// alone decides the kind.
var codeTypes = map[string]string{
	"invalid_api_key":      "authentication_failed",
	"authentication_error": "authentication_failed",
	"insufficient_quota":   "billing_error",
	"billing_error":        "billing_error",
	"rate_limit_exceeded":  "rate_limit",
	"rate_limit_error":     "rate_limit",
	"model_not_found":      "model_not_found",
	"not_found_error":      "model_not_found",
	"overloaded_error":     "server_error",
	"server_error":         "server_error",
	"api_error":            "server_error",
}

// responseBody reads the provider's error object, when opencode kept it.
func (p *Parser) responseBody(body string) {
	if body == "" || body[0] != '{' {
		return
	}
	var b struct {
		Error struct {
			Type     string  `json:"type"`
			Code     any     `json:"code"`      // a string for OpenAI, a number elsewhere
			ResetsAt float64 `json:"resets_at"` // OpenAI usage_limit_reached: epoch seconds
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &b) != nil {
		return
	}
	if r := b.Error.ResetsAt; r > 0 && r < 1e11 {
		p.s.ResetsAt = time.Unix(int64(r), 0).UTC()
	}
	code, _ := b.Error.Code.(string)
	if code == "context_length_exceeded" {
		p.s.TerminalReason = "prompt_too_long"
		return
	}
	if p.s.ErrorType != "" {
		return
	}
	if t, ok := codeTypes[code]; ok {
		p.s.ErrorType = t
	} else if t, ok := codeTypes[b.Error.Type]; ok {
		p.s.ErrorType = t
	}
}

func (p *Parser) addError(t string) {
	if t = jsonl.AddError(&p.s.ErrorMessages, t); t != "" {
		p.lastLine = excerpt.Clip(t, 200)
	}
}

// Structured returns what was read so far. Slices are copies.
func (p *Parser) Structured() policy.Structured {
	s := p.s
	s.ErrorMessages = append([]string(nil), s.ErrorMessages...)
	s.ParseErrors = p.bad.List()
	return s
}

// Progress is the live view: the last thing opencode said or did, and the
// tokens and cost of the model calls finished so far.
func (p *Parser) Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64) {
	return p.lastLine, p.s.TokensIn, p.s.TokensOut, p.s.CostUSD
}

// rejectedPermission is the error opencode 1.18.33 gives a tool call whose
// permission it asked for and `opencode run` rejected (a headless run
// rejects every "ask"; stderr says "permission requested: bash (…);
// auto-rejecting"). It is opencode's own constant (its RejectedError), not
// a model's or a provider's wording; the run then stops with exit 0 and no
// answer. Evidence: testdata/permission_rejected.
const rejectedPermission = "The user rejected permission to use this specific tool call"

// toolUse reads a finished tool call: one that failed because its
// permission was rejected is a permission the agent needs a human to grant
// (the claude kind's permission_denials), and its question says which.
func (p *Parser) toolUse(tool string, st *toolState) {
	if st == nil || st.Status != "error" || !strings.HasPrefix(st.Error, rejectedPermission) {
		return
	}
	s := &p.s
	s.PermissionDenials++
	if len(s.DeniedTools) < maxKept && !slices.Contains(s.DeniedTools, tool) {
		s.DeniedTools = append(s.DeniedTools, tool)
	}
	what := tool
	var in bytes.Buffer
	if json.Compact(&in, st.Input) == nil && in.Len() > 2 {
		what += " " + excerpt.Clip(in.String(), 200)
	}
	s.Question = "opencode asked for permission to use " + what + ", and a headless run rejects every permission it asks for: allow it in the opencode config (permission), or answer how to go on without it"
}
