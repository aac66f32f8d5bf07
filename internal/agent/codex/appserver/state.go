package appserver

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent/codex/codexerr"
	"github.com/drover-dev/drover/internal/agent/jsonl"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

// maxKept bounds the error texts and warnings kept from one run.
const maxKept = 100

// state is what the app-server has said so far, as drover's classifier
// reads it (policy.Structured) plus what the live view shows.
type state struct {
	s        policy.Structured
	lastLine string
	bad      jsonl.Problems
	turns    map[string]bool // the turns this run started
	// Token totals are the thread's: a resumed thread first reports what
	// earlier runs used, which is this run's baseline.
	baseIn, baseOut   int64
	totalIn, totalOut int64
	seenOwnTotal      bool
	lastMessage       string // the last agent message of the current turn
	summary           string // drover_done's summary
}

func newState() *state { return &state{turns: map[string]bool{}} }

// Structured returns a copy of the figures, slices copied.
func (st *state) Structured() policy.Structured {
	s := st.s
	s.TokensIn, s.TokensOut = st.tokens()
	s.NoFinalMessage = noFinalMessage
	if st.summary != "" {
		s.ResultText = st.summary
	}
	s.ErrorMessages = append([]string(nil), s.ErrorMessages...)
	s.RetryStatuses = append([]int(nil), s.RetryStatuses...)
	s.Warnings = append([]string(nil), s.Warnings...)
	s.DeniedTools = append([]string(nil), s.DeniedTools...)
	s.ParseErrors = st.bad.List()
	return s
}

// noFinalMessage is what a finished turn without an agent message means
// (as in exec mode, codex drops a refusal content part).
const noFinalMessage = "codex app-server ended the turn without an agent message (a refusal can look like this)"

func (st *state) tokens() (in, out int64) {
	if !st.seenOwnTotal {
		return 0, 0
	}
	return max(st.totalIn-st.baseIn, 0), max(st.totalOut-st.baseOut, 0)
}

type tokenBreakdown struct {
	InputTokens  int64 `json:"inputTokens"` // cachedInputTokens are part of it
	OutputTokens int64 `json:"outputTokens"`
}

// tokenUsage reads thread/tokenUsage/updated.
func (st *state) tokenUsage(params json.RawMessage) {
	var p struct {
		TurnID     string `json:"turnId"`
		TokenUsage struct {
			Total tokenBreakdown `json:"total"`
		} `json:"tokenUsage"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	t := p.TokenUsage.Total
	if st.turns[p.TurnID] {
		st.totalIn, st.totalOut, st.seenOwnTotal = t.InputTokens, t.OutputTokens, true
		return
	}
	if !st.seenOwnTotal {
		st.baseIn, st.baseOut = t.InputTokens, t.OutputTokens
	}
}

// rateLimits reads account/rateLimits/updated: which limit was reached and
// when the exhausted window resets.
func (st *state) rateLimits(params json.RawMessage) {
	type window struct {
		UsedPercent float64 `json:"usedPercent"`
		ResetsAt    *int64  `json:"resetsAt"`
	}
	var p struct {
		RateLimits struct {
			Primary              *window `json:"primary"`
			Secondary            *window `json:"secondary"`
			RateLimitReachedType *string `json:"rateLimitReachedType"`
		} `json:"rateLimits"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	rl := p.RateLimits
	if rl.RateLimitReachedType != nil {
		applyReached(&st.s, *rl.RateLimitReachedType)
	}
	for _, w := range []*window{rl.Primary, rl.Secondary} {
		if w != nil && w.UsedPercent >= 100 && w.ResetsAt != nil {
			if t := time.Unix(*w.ResetsAt, 0); t.After(st.s.ResetsAt) {
				st.s.ResetsAt = t
			}
		}
	}
}

// applyReached maps a RateLimitReachedType (0.171.0: rate_limit_reached,
// workspace_{owner,member}_credits_depleted,
// workspace_{owner,member}_usage_limit_reached) onto the fields the
// classifier reads for Claude's rate_limit_event and billing errors.
func applyReached(s *policy.Structured, typ string) {
	s.RateLimitType = typ
	switch {
	case strings.HasSuffix(typ, "_usage_limit_reached"):
		s.RateLimitStatus = "rejected"
	case strings.HasSuffix(typ, "_credits_depleted"):
		s.ErrorType = "billing_error"
	}
}

// turnError is a TurnError: the message and codexErrorInfo, a string
// ("contextWindowExceeded") or an object with one key
// ({"httpConnectionFailed":{"httpStatusCode":503}}).
type turnError struct {
	Message        string          `json:"message"`
	CodexErrorInfo json.RawMessage `json:"codexErrorInfo"`
}

// errorInfo splits a codexErrorInfo into its name and HTTP status (0 when
// it carries none).
func errorInfo(info json.RawMessage) (name string, status int) {
	if len(info) == 0 || string(info) == "null" {
		return "", 0
	}
	if json.Unmarshal(info, &name) == nil {
		return name, 0
	}
	var obj map[string]struct {
		HTTPStatusCode *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(info, &obj) != nil {
		return "", 0
	}
	for k, v := range obj {
		name = k
		if v.HTTPStatusCode != nil {
			status = *v.HTTPStatusCode
		}
	}
	return name, status
}

// applyErrorInfo sets the typed fields a codexErrorInfo stands for, so the
// classifier reads an app-server failure by the same rules as Claude's
// structured output and exec mode's statuses. Evidence: the CodexErrorInfo
// type of `codex app-server generate-ts` (0.171.0) and the errors codex
// reported against internal/testkit/fakeprovider (401, 429 and 503 came as
// httpConnectionFailed / responseTooManyFailedAttempts with
// httpStatusCode). An error with no status in its info gets the one its
// text states (codexerr.Status), as in exec mode.
func applyErrorInfo(s *policy.Structured, e turnError) {
	name, status := errorInfo(e.CodexErrorInfo)
	if status == 0 {
		status = codexerr.Status(e.Message)
	}
	if status != 0 {
		s.APIErrorStatus = status
	}
	switch name {
	case "contextWindowExceeded":
		s.TerminalReason = "prompt_too_long"
	case "usageLimitExceeded", "rateLimitExceeded":
		// The 429 family. usageLimitExceeded is both a plan's usage window
		// ("You’ve hit your usage limit …") and exhausted API credit (an
		// insufficient_quota 429 read "Quota exceeded. Check your plan and
		// billing details." against the fake provider), so the phrase table
		// narrows it, as for Claude's rate_limit error type.
		s.ErrorType = "rate_limit"
	case "serverOverloaded":
		if s.APIErrorStatus == 0 {
			s.APIErrorStatus = 503
		}
	case "internalServerError":
		s.ErrorType = "server_error"
	case "unauthorized":
		s.ErrorType = "authentication_failed"
	case "modelNotFound":
		s.ErrorType = "model_not_found"
	case "cyberPolicy", "bioPolicy", "misalignmentPolicyViolation":
		s.StopReason = "refusal"
	case "httpConnectionFailed", "responseStreamConnectionFailed":
		if status == 0 {
			// No response at all: the request never reached the provider.
			s.APIError = "connection_failed"
		}
	}
}

// addError keeps an error text (once when repeated) as the last line.
func (st *state) addError(t string) {
	t = strings.TrimSpace(t)
	if t == "" {
		return
	}
	if n := len(st.s.ErrorMessages); n == 0 || st.s.ErrorMessages[n-1] != t {
		if len(st.s.ErrorMessages) < maxKept {
			st.s.ErrorMessages = append(st.s.ErrorMessages, t)
		}
	}
	st.lastLine = excerpt.Clip(t, 200)
}

func (st *state) warn(t string) {
	if t = strings.TrimSpace(t); t != "" && len(st.s.Warnings) < maxKept {
		st.s.Warnings = append(st.s.Warnings, t)
	}
}

// errorNotice reads the error notification: one the app-server retries
// itself is a retry (as exec mode's "Reconnecting..."), else an error.
func (st *state) errorNotice(params json.RawMessage) {
	var p struct {
		Error     turnError `json:"error"`
		WillRetry bool      `json:"willRetry"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if p.WillRetry {
		st.s.Retries++
		_, status := errorInfo(p.Error.CodexErrorInfo)
		if status == 0 {
			status = codexerr.Status(p.Error.Message)
		}
		st.s.RetryStatuses = append(st.s.RetryStatuses, status)
		if strings.Contains(p.Error.Message, "waiting for network") {
			st.s.APIError = "connection_failed"
		}
		st.lastLine = excerpt.Clip(p.Error.Message, 200)
		return
	}
	st.addError(p.Error.Message)
}

// item reads item/started and item/completed for the live view and the
// turn's final message.
func (st *state) item(method string, params json.RawMessage) {
	var p struct {
		Item struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Command string `json:"command"`
			Message string `json:"message"`
		} `json:"item"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	it := p.Item
	switch it.Type {
	case "agentMessage":
		if method == "item/completed" {
			st.lastMessage = it.Text
			if it.Text != "" {
				st.lastLine = excerpt.LastLine(it.Text, 200)
			}
		}
	case "commandExecution":
		st.lastLine = excerpt.Clip("$ "+it.Command, 200)
	case "userMessage", "reasoning":
	case "error":
		if method == "item/completed" {
			st.warn(it.Message)
		}
	default:
		st.lastLine = "(" + it.Type + ")"
	}
}
