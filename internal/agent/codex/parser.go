package codex

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/drover-dev/drover/internal/agent/codex/appserver"
	"github.com/drover-dev/drover/internal/agent/codex/codexerr"
	"github.com/drover-dev/drover/internal/agent/jsonl"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
)

// DefaultArgs are the arguments drover passes to the codex binary before
// the profile's own: exec mode, JSONL events and no git-repo check (drover
// owns the workspace). The registry ends the line with "-", so the prompt
// is read from stdin.
func DefaultArgs() []string {
	return []string{"exec", "--json", "--skip-git-repo-check"}
}

// noFinalMessage is what a finished codex turn without an agent message
// means: codex can end a refused turn with exit 0 and say nothing.
const noFinalMessage = "codex exited 0 without a final agent message (a refusal can look like this)"

const (
	maxKept = 100
)

type mode int

const (
	modeUnknown mode = iota
	modeJSON
	modeText
	modeAppServer // JSON-RPC messages: codex app-server's output, read by appserver.LogParser
)

// Parser accumulates codex output. Feed takes stdout lines; FeedStderr takes
// stderr lines (only read in plain-text mode, where the errors are there).
// Not safe for concurrent use.
type Parser struct {
	s          policy.Structured
	mode       mode
	lastLine   string
	text       []string       // stdout lines in text mode: the final message
	stderrErrs []string       // "ERROR: …" lines from stderr
	bad        jsonl.Problems // lines that were not events
	as         *appserver.LogParser
}

// NewParser returns an empty parser.
func NewParser() *Parser { return &Parser{} }

var (
	// "Reconnecting... 1/1 (unexpected status 401 Unauthorized: …)"
	reconnectRe = regexp.MustCompile(`^Reconnecting\.\.\.\s*\d+/\d+`)
)

type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Message string `json:"message"`
		Command string `json:"command"`
	} `json:"item"`
}

// Feed reads one stdout line. It never panics. The first non-empty line
// decides the mode: a JSON-RPC message means app-server output (a run log
// of app-server mode, read by appserver.LogParser), another JSON object
// --json, anything else plain text.
// In --json mode a line that is not an event goes to ParseErrors.
func (p *Parser) Feed(line []byte) {
	defer p.bad.Recover(line)
	line = bytes.TrimRight(line, "\r\n")
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		if p.mode == modeText {
			p.keepText("")
		}
		return
	}
	if p.mode == modeAppServer {
		p.as.Feed(trimmed)
		return
	}
	var ev event
	if p.mode == modeUnknown {
		if trimmed[0] == '{' && appserver.IsMessage(trimmed) {
			p.mode, p.as = modeAppServer, appserver.NewLogParser()
			p.as.Feed(trimmed)
			return
		}
		if trimmed[0] == '{' && json.Unmarshal(trimmed, &ev) == nil && ev.Type != "" {
			p.mode = modeJSON
			p.s.Present = true
			p.event(&ev)
			return
		}
		p.mode = modeText
	}
	if p.mode == modeText {
		p.keepText(string(line))
		return
	}
	if trimmed[0] != '{' {
		p.bad.Add("not a JSON event", trimmed)
		return
	}
	if err := json.Unmarshal(trimmed, &ev); err != nil {
		p.bad.Add(err.Error(), trimmed)
		return
	}
	p.event(&ev)
}

func (p *Parser) keepText(l string) {
	if len(p.text) < 10000 {
		p.text = append(p.text, l)
	}
	if strings.TrimSpace(l) != "" {
		p.lastLine = excerpt.Clip(strings.TrimSpace(l), 200)
	}
}

func (p *Parser) event(ev *event) {
	s := &p.s
	switch ev.Type {
	case "thread.started":
		s.SessionID = ev.ThreadID
	case "turn.started":
		s.Turns++
	case "turn.completed":
		s.Finished = true
		if ev.Usage != nil {
			s.TokensIn += ev.Usage.InputTokens // cached_input_tokens are part of input_tokens
			s.TokensOut += ev.Usage.OutputTokens
		}
	case "turn.failed":
		s.Finished = true
		s.IsError = true
		if ev.Error != nil {
			p.addError(ev.Error.Message)
			if st := status(ev.Error.Message); st != 0 {
				s.APIErrorStatus = st
			}
		}
	case "error":
		if strings.Contains(ev.Message, "waiting for network") {
			// Codex's endless wait for a connection (refused, DNS): the
			// run only ends when drover stops it.
			s.APIError = "connection_failed"
		}
		if reconnectRe.MatchString(ev.Message) {
			s.Retries++
			s.RetryStatuses = append(s.RetryStatuses, status(ev.Message))
			p.lastLine = excerpt.Clip(ev.Message, 200)
			return
		}
		p.addError(ev.Message)
	case "item.started", "item.updated", "item.completed":
		p.item(ev)
	}
}

func (p *Parser) item(ev *event) {
	it := ev.Item
	if it == nil {
		return
	}
	switch it.Type {
	case "agent_message":
		if ev.Type == "item.completed" {
			p.s.ResultText = it.Text
		}
		p.lastLine = excerpt.LastLine(it.Text, 200)
	case "error":
		if ev.Type == "item.completed" && len(p.s.Warnings) < maxKept {
			p.s.Warnings = append(p.s.Warnings, it.Message)
		}
	case "command_execution":
		p.lastLine = excerpt.Clip("$ "+it.Command, 200)
	default:
		p.lastLine = "(" + it.Type + ")"
	}
}

// FeedStderr reads one stderr line. In plain-text mode codex prints its
// banner ("session id: …"), errors ("ERROR: …") and "tokens used" there.
func (p *Parser) FeedStderr(line []byte) {
	if p.mode == modeAppServer {
		return // the app-server's stderr is its tracing log
	}
	l := strings.TrimSpace(string(line))
	switch {
	case strings.HasPrefix(l, "session id: ") && p.s.SessionID == "" && p.mode != modeJSON:
		p.s.SessionID = strings.TrimPrefix(l, "session id: ")
	case strings.HasPrefix(l, "ERROR: "):
		msg := strings.TrimPrefix(l, "ERROR: ")
		if reconnectRe.MatchString(msg) {
			if p.mode != modeJSON {
				p.s.Retries++
			}
			return
		}
		if n := len(p.stderrErrs); len(p.stderrErrs) < maxKept && (n == 0 || p.stderrErrs[n-1] != msg) {
			p.stderrErrs = append(p.stderrErrs, msg)
		}
	}
}

// status is the HTTP status msg reports, or 0.
func status(msg string) int { return codexerr.Status(msg) }

func (p *Parser) addError(t string) {
	if t = jsonl.AddError(&p.s.ErrorMessages, t); t != "" {
		p.lastLine = excerpt.Clip(t, 200)
	}
}

// Structured returns what was read so far. Slices are copies.
func (p *Parser) Structured() policy.Structured {
	if p.mode == modeAppServer {
		return p.as.Structured()
	}
	s := p.s
	s.NoFinalMessage = noFinalMessage
	s.ErrorMessages = append([]string(nil), s.ErrorMessages...)
	s.RetryStatuses = append([]int(nil), s.RetryStatuses...)
	s.Warnings = append([]string(nil), s.Warnings...)
	s.ParseErrors = p.bad.List()
	if p.mode != modeJSON {
		s.ResultText = strings.TrimSpace(strings.Join(p.text, "\n"))
		if len(s.ErrorMessages) == 0 {
			// Not IsError: text mode has no end-of-turn record, so an
			// ERROR line may have been recovered from; the exit code decides.
			s.ErrorMessages = append([]string(nil), p.stderrErrs...)
		}
	}
	return s
}

// Progress is the live view: the last thing codex said or did and tokens of
// completed turns (codex reports no cost).
func (p *Parser) Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64) {
	if p.mode == modeAppServer {
		return p.as.Progress()
	}
	return p.lastLine, p.s.TokensIn, p.s.TokensOut, 0
}
