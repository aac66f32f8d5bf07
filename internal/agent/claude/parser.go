package claude

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/jsonl"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

// DefaultArgs are the arguments drover passes to the claude binary. The
// prompt goes on stdin: `claude -p` reads it from there when no prompt
// argument is given (the captures pass it as an argument; an empty one is
// refused with "Input must be provided either through stdin or as a prompt
// argument"). stream-json in print mode requires --verbose.
func DefaultArgs() []string {
	return []string{"-p", "--output-format", "stream-json", "--verbose"}
}

// Parser accumulates Claude Code output, one stdout line at a time. The zero
// value is not ready; use NewParser. Not safe for concurrent use.
type Parser struct {
	s          policy.Structured
	lastLine   string
	msgUsage   map[string]usage // assistant message id → its latest usage
	bad        jsonl.Problems   // lines that were not events
	resultSeen bool
	asked      map[string]string // AskUserQuestion tool_use id → its question, until its result
}

// NewParser returns an empty parser.
func NewParser() *Parser {
	return &Parser{msgUsage: map[string]usage{}, asked: map[string]string{}}
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// in counts every input token the model read, cached or not: cache tokens
// are billed (at other rates) and total_cost_usd already prices them.
func (u usage) in() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result (in user events)
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
}

// event is the union of the fields drover reads from any line.
type event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`

	// assistant
	Message *struct {
		ID         string         `json:"id"`
		Content    []contentBlock `json:"content"`
		StopReason *string        `json:"stop_reason"`
		Usage      *usage         `json:"usage"`
	} `json:"message"`
	Error *string `json:"error"` // assistant: error kind; api_retry: error kind
	// APIError is the transport-level cause (2.1.3xx, assistant and
	// result): "connection_failed" for refused, reset and DNS failures.
	APIError string `json:"api_error"`

	// system/api_retry
	Attempt      int      `json:"attempt"`
	RetryDelayMS *float64 `json:"retry_delay_ms"`
	ErrorStatus  *int     `json:"error_status"`

	// rate_limit_event
	RateLimitInfo *struct {
		Status          string  `json:"status"`
		ResetsAt        float64 `json:"resetsAt"`
		RateLimitType   string  `json:"rateLimitType"`
		OverageStatus   string  `json:"overageStatus"`
		OverageResetsAt float64 `json:"overageResetsAt"`
		IsUsingOverage  bool    `json:"isUsingOverage"`
	} `json:"rate_limit_info"`

	// stream_event (--include-partial-messages)
	Event *struct {
		Type  string `json:"type"`
		Delta *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	} `json:"event"`

	// result
	IsError           bool            `json:"is_error"`
	APIErrorStatus    *int            `json:"api_error_status"`
	NumTurns          int             `json:"num_turns"`
	Result            *string         `json:"result"`
	StopReason        *string         `json:"stop_reason"`
	TotalCostUSD      *float64        `json:"total_cost_usd"`
	Usage             *usage          `json:"usage"`
	PermissionDenials []denial        `json:"permission_denials"`
	TerminalReason    string          `json:"terminal_reason"`
	Errors            json.RawMessage `json:"errors"`
}

type denial struct {
	ToolName string `json:"tool_name"`
}

// Feed reads one stdout line. It never panics; a line that is not a JSON
// event is recorded in Structured().ParseErrors and otherwise ignored.
func (p *Parser) Feed(line []byte) {
	defer p.bad.Recover(line)
	var ev event
	if !jsonl.Start(&p.bad, &p.s, line, &ev, func() string { return ev.SessionID }) {
		return
	}
	switch ev.Type {
	case "assistant":
		p.assistant(&ev)
	case "user":
		p.lastLine = "(tool result)"
		p.user(&ev)
	case "system":
		p.system(&ev)
	case "rate_limit_event":
		p.rateLimit(&ev)
	case "stream_event":
		p.stream(&ev)
	case "result":
		p.result(&ev)
	}
}

func (p *Parser) assistant(ev *event) {
	m := ev.Message
	if m == nil {
		return
	}
	var text string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				text = t
				p.lastLine = excerpt.LastLine(t, 200)
			}
		case "tool_use":
			p.lastLine = "→ " + b.Name
			if b.Name == askTool && len(p.asked) < 100 {
				if q := askedQuestion(b.Input); q != "" {
					p.asked[b.ID] = q
				}
			}
		}
	}
	if ev.Error != nil && *ev.Error != "" {
		p.s.ErrorType = *ev.Error
		p.addError(text)
	}
	if ev.APIError != "" {
		p.s.APIError = ev.APIError
	}
	if m.Usage != nil && m.ID != "" && len(p.msgUsage) < 10000 {
		p.msgUsage[m.ID] = *m.Usage
	}
	if !p.resultSeen {
		var in, out int64
		for _, u := range p.msgUsage {
			in += u.in()
			out += u.OutputTokens
		}
		p.s.TokensIn, p.s.TokensOut = in, out
	}
}

// askTool is Claude Code's tool for asking the user. Print mode disables
// it: the call comes back as an error tool_result ("No such tool available:
// AskUserQuestion …", 2.1.197 and 2.1.332), and that denied call is the
// structural sign the agent wanted a human decision (result.permission_denials
// stays empty).
const askTool = "AskUserQuestion"

// user reads tool results: a denied AskUserQuestion makes its question the
// run's question.
func (p *Parser) user(ev *event) {
	if ev.Message == nil {
		return
	}
	for _, b := range ev.Message.Content {
		if b.Type != "tool_result" {
			continue
		}
		q, ok := p.asked[b.ToolUseID]
		if !ok {
			continue
		}
		delete(p.asked, b.ToolUseID)
		if b.IsError {
			p.s.Question = q
		}
	}
}

// askedQuestion is the question(s) of an AskUserQuestion input, with the
// options offered: {"questions":[{"question":…,"options":[{"label":…}]}]}
// (older inputs: {"question":…}).
func askedQuestion(in json.RawMessage) string {
	type option struct {
		Label string `json:"label"`
	}
	type question struct {
		Question string   `json:"question"`
		Options  []option `json:"options"`
	}
	var v struct {
		question
		Questions []question `json:"questions"`
	}
	if json.Unmarshal(in, &v) != nil {
		return ""
	}
	qs := v.Questions
	if v.Question != "" {
		qs = append([]question{v.question}, qs...)
	}
	var parts []string
	for _, q := range qs {
		t := strings.TrimSpace(q.Question)
		if t == "" {
			continue
		}
		var labels []string
		for _, o := range q.Options {
			if l := strings.TrimSpace(o.Label); l != "" {
				labels = append(labels, l)
			}
		}
		if len(labels) > 0 {
			t += " (options: " + strings.Join(labels, ", ") + ")"
		}
		parts = append(parts, t)
	}
	return excerpt.Line(strings.Join(parts, " "), policy.MaxQuestion)
}

func (p *Parser) system(ev *event) {
	switch ev.Subtype {
	case "api_retry":
		p.s.Retries++
		status := 0
		if ev.ErrorStatus != nil {
			status = *ev.ErrorStatus
		}
		p.s.RetryStatuses = append(p.s.RetryStatuses, status)
		kind := ""
		if ev.Error != nil {
			kind = *ev.Error
		}
		p.s.RetryErrors = append(p.s.RetryErrors, kind)
		if ev.RetryDelayMS != nil && *ev.RetryDelayMS >= 0 && *ev.RetryDelayMS < 1e10 {
			p.s.RetryDelay = time.Duration(*ev.RetryDelayMS * float64(time.Millisecond))
		}
		p.lastLine = fmt.Sprintf("API retry %d (status %d, %s)", ev.Attempt, status, kind)
	case "model_refusal_no_fallback":
		p.lastLine = "model refused the request"
	}
}

func (p *Parser) rateLimit(ev *event) {
	info := ev.RateLimitInfo
	if info == nil {
		return
	}
	// Every run of a subscription reports its window, "allowed" (or
	// "allowed_warning") with resetsAt its end hours away: only a rejected
	// window's reset is when the run may go again. A rejected window the
	// run goes on past as extra usage (isUsingOverage, overage allowed)
	// binds it no more than an allowed one. The status kept is the one that
	// binds the run; the last event wins.
	status := info.Status
	overage := info.OverageStatus == "allowed" || info.OverageStatus == "allowed_warning"
	if status == "rejected" && info.IsUsingOverage && overage {
		status = "allowed"
	}
	p.s.RateLimitStatus = status
	p.s.RateLimitType = info.RateLimitType
	p.s.ResetsAt = time.Time{}
	if status != "rejected" {
		return
	}
	reset := epoch(info.ResetsAt)
	if o := epoch(info.OverageResetsAt); info.OverageStatus == "rejected" && !o.IsZero() && (reset.IsZero() || o.Before(reset)) {
		reset = o // the extra usage comes back first
	}
	p.s.ResetsAt = reset
}

// epoch reads a time in Unix seconds; zero for none or one out of range.
func epoch(sec float64) time.Time {
	if sec <= 0 || sec >= 1e11 {
		return time.Time{}
	}
	return time.Unix(int64(sec), 0).UTC()
}

func (p *Parser) stream(ev *event) {
	if ev.Event != nil && ev.Event.Delta != nil && ev.Event.Delta.Text != "" {
		p.lastLine = excerpt.LastLine(ev.Event.Delta.Text, 200)
	}
}

func (p *Parser) result(ev *event) {
	p.resultSeen = true
	s := &p.s
	s.Finished = true
	s.Subtype = ev.Subtype
	s.IsError = ev.IsError
	s.TerminalReason = ev.TerminalReason
	s.Turns = ev.NumTurns
	if ev.APIErrorStatus != nil {
		s.APIErrorStatus = *ev.APIErrorStatus
	}
	if ev.APIError != "" {
		s.APIError = ev.APIError
	}
	if ev.StopReason != nil {
		s.StopReason = *ev.StopReason
	}
	if ev.Result != nil {
		s.ResultText = *ev.Result
		p.lastLine = excerpt.LastLine(*ev.Result, 200)
		if ev.IsError {
			p.addError(*ev.Result)
		}
	}
	var errs []string
	if len(ev.Errors) > 0 && json.Unmarshal(ev.Errors, &errs) == nil {
		for _, e := range errs {
			p.addError(e)
		}
	}
	if ev.TotalCostUSD != nil {
		s.CostUSD, s.CostKnown = *ev.TotalCostUSD, true
	}
	if ev.Usage != nil {
		s.TokensIn, s.TokensOut = ev.Usage.in(), ev.Usage.OutputTokens
	}
	s.PermissionDenials = len(ev.PermissionDenials)
	s.DeniedTools = nil
	for _, d := range ev.PermissionDenials {
		s.DeniedTools = append(s.DeniedTools, d.ToolName)
	}
}

// addError appends an error text unless it repeats the last one.
func (p *Parser) addError(t string) { jsonl.AddError(&p.s.ErrorMessages, t) }

// Structured returns what was read so far. Slices are copies.
func (p *Parser) Structured() policy.Structured {
	s := p.s
	s.ErrorMessages = append([]string(nil), s.ErrorMessages...)
	s.RetryStatuses = append([]int(nil), s.RetryStatuses...)
	s.RetryErrors = append([]string(nil), s.RetryErrors...)
	s.DeniedTools = append([]string(nil), s.DeniedTools...)
	s.ParseErrors = p.bad.List()
	return s
}

// Progress is the live view: the last thing the agent said or did, tokens
// so far and the cost once the result states it.
func (p *Parser) Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64) {
	return p.lastLine, p.s.TokensIn, p.s.TokensOut, p.s.CostUSD
}
