package gemini

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/drover-dev/drover/internal/agent/jsonl"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

const (
	maxKept       = 100
	maxResultText = 64 << 10
)

// Parser accumulates Gemini CLI stream-json output. The zero value is not
// ready; use NewParser. Not safe for concurrent use.
type Parser struct {
	s             policy.Structured
	text          strings.Builder // assistant text since the last tool call
	lastLine      string
	bad           jsonl.Problems // lines that were not events
	stderrStatus  int            // HTTP status of the error object the CLI dumped on stderr
	terminalQuota bool           // stderr named a TerminalQuotaError
	transport     string         // the errno (or fetch failure) of a request that got no answer
}

// NewParser returns an empty parser.
func NewParser() *Parser { return &Parser{} }

// event is the union of the fields drover reads from any line.
type event struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`

	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`

	// tool_use, tool_result
	ToolName string `json:"tool_name"`

	// error (severity warning|error), result (status success|error)
	Severity string     `json:"severity"`
	Message  string     `json:"message"`
	Status   string     `json:"status"`
	Error    *errorInfo `json:"error"`
	Stats    *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"stats"`
}

type errorInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// apiErrorRe finds the Google API error object the CLI embeds in its
// messages: `[API Error: {"error":{"code":429,…,"status":"RESOURCE_EXHAUSTED"}}]`.
var (
	apiCodeRe   = regexp.MustCompile(`"code"\s*:\s*(\d{3})\b`)
	apiStatusRe = regexp.MustCompile(`"status"\s*:\s*"([A-Z_]+)"`)
	// "got status: 429 Too Many Requests" (the CLI's wrapper for some
	// transports) and "status: 503" lines.
	gotStatusRe = regexp.MustCompile(`\bgot status:? (\d{3})\b`)
	// The error object Node prints on stderr when a request fails:
	// "  status: 429" inside `TerminalQuotaError: … { cause: …, status: 429 }`.
	stderrStatusRe = regexp.MustCompile(`^\s*status: (\d{3}),?$`)
	// The CLI's own retries: "Attempt 3 failed. Retrying with backoff... Error: …".
	retryRe = regexp.MustCompile(`^Attempt \d+ failed\b`)
	// The API's answer to a prompt over the model's context window.
	tooLongRe = regexp.MustCompile(`(?i)input token count.{0,40}exceeds the maximum|exceeds the maximum number of tokens`)
	// Node's transport errors in the error object the CLI dumps on stderr
	// ("[cause]: Error: read ECONNRESET" under "TypeError: terminated" when
	// a stream is cut; undici's UND_ERR_* codes): the request got no
	// answer from a server.
	errnoRe = regexp.MustCompile(`\b(ECONNRESET|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|UND_ERR_[A-Z_]+)\b`)
	// The CLI's own words for a request that never reached a server
	// (refused, DNS; the captures connection_refused and dns_failure): it
	// prints no errno then.
	fetchFailedRe = regexp.MustCompile(`\bfetch failed sending request\b`)
	// Headless start-up refusals of Gemini CLI's auth check (exit 41),
	// printed on stderr before any event.
	authSetupRe = regexp.MustCompile(`(?i)please set an auth method|must specify the GEMINI_API_KEY|invalid auth method selected|GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION`)
)

// blocked are the messages the CLI prints (an error event) when the model's
// candidate ends with finishReason SAFETY, RECITATION or another block: the
// model declined, which is a refusal.
var blocked = []string{
	"blocked due to safety settings",
	"blocked due to recitation",
	"blocked due to other policy settings",
}

// errorTypes maps the Fatal* error class names the CLI prints in
// result.error.type (and uses for its exit codes: 41 auth, 42 input,
// 52 config, 53 turn limit) to the typed signals policy.Classify reads.
var errorTypes = map[string]string{
	"FatalAuthenticationError": "authentication_failed",
	"FatalConfigError":         "model_not_found", // config_error
	"ModelNotFoundError":       "model_not_found",
}

// statusTypes maps Google API status names to the same error types, where
// the name alone decides the kind. RESOURCE_EXHAUSTED is left to the HTTP
// status (429) and the phrase table (per-minute vs daily quota).
var statusTypes = map[string]string{
	"UNAUTHENTICATED": "authentication_failed",
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
	case "message":
		p.message(&ev)
	case "tool_use":
		p.text.Reset()
		p.lastLine = "→ " + ev.ToolName
	case "tool_result":
		p.lastLine = "(tool result)"
	case "error":
		p.errorEvent(&ev)
	case "result":
		p.result(&ev)
	}
}

func (p *Parser) message(ev *event) {
	if ev.Role != "assistant" {
		return
	}
	if ev.Content == "" {
		return
	}
	if !ev.Delta {
		p.text.Reset()
	}
	if p.text.Len() < maxResultText {
		p.text.WriteString(ev.Content)
	}
	p.s.Turns = max(p.s.Turns, 1)
	if l := excerpt.LastLine(strings.TrimSpace(p.text.String()), 200); l != "" {
		p.lastLine = l
	}
}

// errorEvent reads an error event. Warnings are kept apart; errors the CLI
// recovers from leave the verdict to the result and the exit code, except
// the ones that end the turn: a blocked candidate, a truncated response,
// the session turn limit.
func (p *Parser) errorEvent(ev *event) {
	if ev.Severity == "warning" {
		if len(p.s.Warnings) < maxKept {
			p.s.Warnings = append(p.s.Warnings, ev.Message)
		}
		return
	}
	p.addError(ev.Message)
	msg := strings.ToLower(ev.Message)
	for _, b := range blocked {
		if strings.Contains(msg, b) {
			p.s.IsError, p.s.StopReason = true, "refusal"
			return
		}
	}
	switch {
	case strings.HasPrefix(msg, "model response was truncated"):
		p.s.IsError, p.s.ErrorType = true, "max_output_tokens"
	case strings.HasPrefix(msg, "maximum session turns exceeded"):
		p.s.IsError, p.s.TerminalReason = true, "max_turns"
	}
}

func (p *Parser) result(ev *event) {
	s := &p.s
	s.Finished = true
	s.ResultText = strings.TrimSpace(p.text.String())
	if ev.Stats != nil {
		s.TokensIn, s.TokensOut = ev.Stats.InputTokens, ev.Stats.OutputTokens
	}
	if ev.Status != "error" {
		return
	}
	s.IsError = true
	if ev.Error == nil {
		return
	}
	p.addError(ev.Error.Message)
	if t, ok := errorTypes[ev.Error.Type]; ok {
		s.ErrorType = t
	}
	switch ev.Error.Type {
	case "FatalTurnLimitedError":
		s.TerminalReason = "max_turns"
	case "TerminalQuotaError", "RetryableQuotaError":
		s.APIErrorStatus = 429 // the CLI's names for a 429 it gave up on
	}
	p.apiError(ev.Error.Message)
}

// apiError reads the HTTP status and Google status name out of a message
// that embeds the API's error object.
func (p *Parser) apiError(msg string) {
	s := &p.s
	if s.APIErrorStatus == 0 {
		if m := apiCodeRe.FindStringSubmatch(msg); m != nil {
			s.APIErrorStatus, _ = strconv.Atoi(m[1])
		} else if m := gotStatusRe.FindStringSubmatch(msg); m != nil {
			s.APIErrorStatus, _ = strconv.Atoi(m[1])
		}
	}
	if s.APIErrorStatus == 400 && tooLongRe.MatchString(msg) {
		s.TerminalReason = "prompt_too_long"
	}
	if m := apiStatusRe.FindStringSubmatch(msg); m != nil && s.ErrorType == "" {
		s.ErrorType = statusTypes[m[1]]
		if m[1] == "INVALID_ARGUMENT" && strings.Contains(msg, "API_KEY_INVALID") {
			s.ErrorType = "authentication_failed" // Google answers a bad key with 400
		}
	}
}

// FeedStderr reads one stderr line. Gemini CLI prints its start-up refusals
// there (before any event) and, when a request fails, the error object
// with its HTTP status; the result event's message does not always keep
// the status (a daily quota reads "You have exhausted your daily quota").
func (p *Parser) FeedStderr(line []byte) {
	l := string(bytes.TrimSpace(line))
	switch {
	case retryRe.MatchString(l):
		p.s.Retries++
	case strings.Contains(l, "TerminalQuotaError"):
		p.terminalQuota = true
	case errnoRe.MatchString(l):
		p.transport = errnoRe.FindString(l)
	case fetchFailedRe.MatchString(l) && p.transport == "":
		p.transport = "fetch failed"
	case authSetupRe.MatchString(l):
		p.s.Present, p.s.IsError = true, true
		p.s.ErrorType = "authentication_failed"
		p.addError(l)
	default:
		if m := stderrStatusRe.FindStringSubmatch(l); m != nil {
			p.stderrStatus, _ = strconv.Atoi(m[1])
		}
	}
}

// addError appends an error text unless it repeats the last one.
func (p *Parser) addError(t string) {
	if t = jsonl.AddError(&p.s.ErrorMessages, t); t != "" {
		p.lastLine = excerpt.Clip(t, 200)
	}
}

// Structured returns what was read so far. Slices are copies.
func (p *Parser) Structured() policy.Structured {
	s := p.s
	if !s.Finished {
		s.ResultText = strings.TrimSpace(p.text.String())
	}
	if s.IsError && s.APIErrorStatus == 0 {
		s.APIErrorStatus = p.stderrStatus
	}
	if s.IsError && s.APIErrorStatus == 0 && p.transport != "" && s.ErrorType == "" {
		s.APIError = "connection_failed" // no server answered: the operator's network
	}
	if s.IsError && p.terminalQuota {
		// The CLI calls a quota it will not retry (a daily or plan
		// window) terminal: that is a usage window, not a rate limit.
		s.APIErrorStatus, s.RateLimitStatus = 429, "rejected"
	}
	s.ErrorMessages = append([]string(nil), s.ErrorMessages...)
	s.Warnings = append([]string(nil), s.Warnings...)
	s.ParseErrors = p.bad.List()
	return s
}

// Progress is the live view: the last thing the agent said or did and the
// tokens of the finished run (Gemini CLI reports no cost, and its token
// counts only in the final result).
func (p *Parser) Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64) {
	return p.lastLine, p.s.TokensIn, p.s.TokensOut, 0
}
