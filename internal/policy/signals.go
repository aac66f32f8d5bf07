package policy

import (
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Signals is everything known about a finished agent process, as the agent
// adapter saw it. Classify reads it; it never touches processes or files.
type Signals struct {
	AgentKind string // the profile's agent kind (the agent registry names them)
	ExitCode  int    // -1 when the process did not exit normally
	Signaled  bool   // the process died of a signal
	// KilledFor is set when drover itself stopped the process:
	// "timeout", "stall", "cancel", "shutdown", "spend".
	KilledFor string
	// StopReason, with KilledFor, is drover's own reason for the stop in
	// words ("an operator moved DRV-1 to done"); it replaces the generic
	// message of KilledFor.
	StopReason string
	Structured Structured
	Stdout     string // tail of stdout (the adapter decides how much)
	Stderr     string // tail of stderr
	// Now is the time the run ended, used to resolve relative reset phrases
	// ("resets 3pm (UTC)", "try again at 7:05 PM"). Zero: such phrases are
	// not turned into a RetryAt. Classify never reads the clock itself.
	Now time.Time
}

// Structured holds the typed fields an adapter parsed from the agent's own
// machine-readable output. The zero value means "nothing structured was seen".
type Structured struct {
	Present           bool          // the adapter recognised structured output at all
	IsError           bool          // claude result.is_error; codex turn.failed / error
	Subtype           string        // claude result.subtype
	APIErrorStatus    int           // claude result.api_error_status (HTTP status), 0 if null
	ErrorType         string        // claude assistant message "error" (rate_limit, authentication_failed, billing_error, …)
	APIError          string        // the transport cause: claude (2.1.3xx) "api_error", "connection_failed" for refused, reset, DNS; codex: the same while it waits for the network
	TerminalReason    string        // claude result.terminal_reason
	ResultText        string        // final result / last agent message text
	ErrorMessages     []string      // error texts in order (codex error events, turn.failed, claude api errors)
	RetryStatuses     []int         // HTTP statuses of the CLI's own retries (claude system/api_retry)
	RetryDelay        time.Duration // last retry delay the CLI honoured (server retry-after)
	ResetsAt          time.Time     // usage/rate limit reset time, when the output states one
	PermissionDenials int           // claude result.permission_denials count
	Question          string        // a question the agent asked a human through a tool the CLI could not serve (claude AskUserQuestion in print mode): input_required
	SessionID         string        // claude session_id / codex thread_id
	Turns             int
	TokensIn          int64
	TokensOut         int64
	CostUSD           float64
	CostKnown         bool
	ParseErrors       []string // bad or truncated lines, reported not fatal

	// NoFinalMessage, when set, says what a finished run that ends without a
	// final message means for this agent (codex can end a refused turn with
	// exit 0 and no agent message): such a run is unknown, not a success,
	// and this is its message.
	NoFinalMessage string

	// Finished: the agent printed its own end-of-run record (claude result,
	// codex turn.completed / turn.failed). A run killed from outside has not.
	Finished bool
	// StopReason is claude result.stop_reason ("end_turn", "tool_use",
	// "refusal", …); "refusal" is the model declining the task.
	StopReason string
	// RetryErrors are the error kinds of the CLI's own retries, in order
	// (claude system/api_retry "error": rate_limit, overloaded, server_error,
	// authentication_failed, unknown).
	RetryErrors []string
	// Retries counts the CLI's own retries (claude api_retry events, codex
	// "Reconnecting... N/M" error events), whether or not a status was shown.
	Retries int
	// RateLimitStatus and RateLimitType come from claude's rate_limit_event
	// ("rejected", "five_hour"); a rejected one means a plan usage window.
	RateLimitStatus string
	RateLimitType   string
	// DeniedTools names the tools in claude result.permission_denials.
	DeniedTools []string
	// Warnings are non-fatal error items (codex item.completed type=error:
	// "Falling back from WebSockets…", "Model metadata … not found").
	Warnings []string
}

// Classification is the verdict on one run's output.
type Classification struct {
	Kind       Kind          `json:"kind"`
	RetryAfter time.Duration `json:"-"`
	RetryAt    time.Time     `json:"-"` // absolute reset time when known
	Message    string        `json:"message"`
	// Question is what the agent asked a human, when Kind is input_required
	// and the agent said it in so many words (a tool call, the QUESTION: line).
	Question string `json:"question,omitempty"`
	Source   string `json:"source"` // e.g. "structured:api_error_status", "phrase:rate_limit_exceeded", "exit_code", "rule:NAME"
	// Reason is drover's own what/where/how for a kind it found outside
	// the agent (push_rejected: the branch, the repository, both commits);
	// a block's reason takes its non-empty parts.
	Reason *board.BlockReason `json:"-"`
}
