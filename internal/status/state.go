// Package status builds the one snapshot of drover's state that operators
// read: `drover status --json` prints it and `GET /api/v1/state` serves it.
//
// The top-level fields follow Symphony's /api/v1/state shape field for field
// (generated_at, counts{running, retrying}, running[], retrying[],
// codex_totals, rate_limits); drover adds blocked[], parked[], agents[],
// spend, errors[], nodes[], columns[] and drover (the build), and adds fields to the running and
// retrying rows. Nothing in here writes: a snapshot is a read of the store.
package status

import (
	"encoding/json"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/version"
)

// State is the snapshot. Lists are never null in JSON.
type State struct {
	GeneratedAt time.Time  `json:"generated_at"`
	Counts      Counts     `json:"counts"`
	Running     []Running  `json:"running"`
	Retrying    []Retrying `json:"retrying"`
	CodexTotals Totals     `json:"codex_totals"`
	// RateLimits is Symphony's latest rate-limit payload; drover does not
	// track one (rate limits show as deferred cards and open breakers), so
	// it is always null.
	RateLimits json.RawMessage `json:"rate_limits"`

	Blocked []Blocked `json:"blocked"`
	Parked  []Parked  `json:"parked"`
	Agents  []Agent   `json:"agents"`
	Spend   Spend     `json:"spend"`
	Errors  []Error   `json:"errors"`
	Nodes   []Node    `json:"nodes"`
	Columns []Column  `json:"columns"`
	// Drover is the build that made the snapshot (drover version).
	Drover version.Info `json:"drover"`
	// Retention: what the store keeps and its latest collection.
	Retention Retention `json:"retention"`
	// AgentLimits are the caps on what agents write; each running row
	// counts its run's.
	AgentLimits AgentLimits `json:"agent_limits"`
}

// Counts are Symphony's counts plus drover's. Blocked and Parked are totals
// even when the blocked[] and parked[] lists are capped (ListCap).
type Counts struct {
	Running  int `json:"running"`
	Retrying int `json:"retrying"`
	Blocked  int `json:"blocked"`
	Parked   int `json:"parked"`
	Cards    int `json:"cards"`
}

// Tokens is Symphony's token triple.
type Tokens struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// Running is one open run. The first ten fields are Symphony's.
type Running struct {
	IssueID         string     `json:"issue_id"`
	IssueIdentifier string     `json:"issue_identifier"`
	State           string     `json:"state"`
	SessionID       string     `json:"session_id"` // the run id: drover's session is the run
	TurnCount       int        `json:"turn_count"` // not tracked by drover's adapters: 0
	LastEvent       string     `json:"last_event"`
	LastMessage     string     `json:"last_message"`
	StartedAt       time.Time  `json:"started_at"`
	LastEventAt     *time.Time `json:"last_event_at"`
	Tokens          Tokens     `json:"tokens"`

	RunID       string `json:"run_id"`
	Title       string `json:"title"`
	Agent       string `json:"agent"`
	Node        string `json:"node"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"` // -1 unbounded, 0 unknown (LimitUnknown)
	// Counted is how many earlier attempts of this retry epoch spent
	// max_attempts: fewer than Attempt-1 when some were not counted
	// (interrupted, released, deferred).
	Counted    int     `json:"counted"`
	RetryEpoch int     `json:"retry_epoch"`
	ElapsedS   float64 `json:"elapsed_s"`
	LastOutput string  `json:"last_output"`
	CostUSD    float64 `json:"cost_usd"`
	LogPath    string  `json:"log_path"`
	// AgentComments and AgentProgress are the comments and progress notes
	// the run's agent wrote (against State.AgentLimits).
	AgentComments int `json:"agent_comments"`
	AgentProgress int `json:"agent_progress"`
}

// AgentLimits are the caps on what agents write (limits.agent_*;
// negative: no cap).
type AgentLimits struct {
	CommentsPerRun  int `json:"comments_per_run"`
	CommentsPerCard int `json:"comments_per_card"`
	ProgressPerRun  int `json:"progress_per_run"`
	ProgressPerCard int `json:"progress_per_card"`
}

// Retrying is a card waiting for its next attempt. The first five fields are
// Symphony's; Attempt is the attempt that will run next (as in Symphony),
// LastAttempt the one that failed.
type Retrying struct {
	IssueID         string    `json:"issue_id"`
	IssueIdentifier string    `json:"issue_identifier"`
	Attempt         int       `json:"attempt"`
	DueAt           time.Time `json:"due_at"`
	Error           string    `json:"error"`

	Title       string  `json:"title"`
	State       string  `json:"state"`
	Agent       string  `json:"agent"`
	Kind        string  `json:"kind"`
	LastAttempt int     `json:"last_attempt"`
	MaxAttempts int     `json:"max_attempts"` // as Running's
	Counted     int     `json:"counted"`      // earlier attempts of the epoch that spent max_attempts
	RunID       string  `json:"run_id"`
	DueInS      float64 `json:"due_in_s"`
	Reason      string  `json:"reason"` // the card's state_reason
}

// Totals is Symphony's codex_totals, summed over the runs of the current
// spend day (limits.day_boundary) including runs in flight; CostUSD and
// Runs are drover's additions.
type Totals struct {
	InputTokens    int64   `json:"input_tokens"`
	OutputTokens   int64   `json:"output_tokens"`
	TotalTokens    int64   `json:"total_tokens"`
	SecondsRunning float64 `json:"seconds_running"`
	CostUSD        float64 `json:"cost_usd"`
	Runs           int     `json:"runs"`
}

// Blocked is a card in a blocked column: what is wrong, where, how to go on.
type Blocked struct {
	IssueID         string             `json:"issue_id"`
	IssueIdentifier string             `json:"issue_identifier"`
	Identifier      string             `json:"identifier"`
	Title           string             `json:"title"`
	State           string             `json:"state"`
	StateReason     string             `json:"state_reason"`
	BlockReason     *board.BlockReason `json:"block_reason"`
	GaveUp          *board.GaveUp      `json:"gave_up"`
	UpdatedAt       time.Time          `json:"updated_at"`
}

// Parked is a card awaiting a human answer.
type Parked struct {
	IssueID         string    `json:"issue_id"`
	IssueIdentifier string    `json:"issue_identifier"`
	Identifier      string    `json:"identifier"`
	Title           string    `json:"title"`
	State           string    `json:"state"`
	Question        string    `json:"question"` // the last agent comment, else the state reason
	UpdatedAt       time.Time `json:"updated_at"`
}

// Agent is one agent profile and its breaker.
type Agent struct {
	Name        string     `json:"name"`
	Kind        string     `json:"kind"`  // the profile's kind (agent/registry: claude, codex, gemini, opencode, command, sim)
	State       string     `json:"state"` // closed, open, half_open, paused
	Reason      string     `json:"reason"`
	Until       *time.Time `json:"until"`
	FailureKind string     `json:"failure_kind"` // the kind that opened or paused the breaker
	// Probe says what the profile's next probe will test, for a profile
	// held because one failure ended runs on several cards ("" otherwise).
	Probe   string `json:"probe,omitempty"`
	Default bool   `json:"default"`
	// Fallback is the profile's chain (agents.profiles.NAME.fallback):
	// while it is held its cards run on the first free link. MaxConcurrent
	// is its cap of live runs across the nodes (0 = none).
	Fallback      []string   `json:"fallback,omitempty"`
	MaxConcurrent int        `json:"max_concurrent,omitempty"`
	UpdatedAt     *time.Time `json:"updated_at"`
}

// Spend is today's spend against the limits (0 = no limit).
type Spend struct {
	TodayUSD      float64   `json:"today_usd"`
	DayCapUSD     float64   `json:"day_cap_usd"`
	PerCardCapUSD float64   `json:"per_card_cap_usd"`
	Paused        bool      `json:"paused"` // the day cap is reached: no new dispatch until NextDayStart
	DayStart      time.Time `json:"day_start"`
	// ReservedUSD is what the day's runs in flight are expected to cost on
	// top of their live figures (EstimateUSD each, see policy.DayBudget).
	ReservedUSD    float64   `json:"reserved_usd"`
	EstimateUSD    float64   `json:"estimate_usd"`    // one run's expected cost (see EstimateSource)
	EstimateSource string    `json:"estimate_source"` // config, recent_runs or unknown
	RunningToday   int       `json:"running_today"`   // the day's runs in flight
	Reason         string    `json:"reason"`          // why new runs wait ("" = they do not)
	NextDayStart   time.Time `json:"next_day_start"`
}

// Error is something an operator must fix, read from the nodes' status
// objects and the outbox. Code is the key it came from:
//
//   - config_error: the node's config reload failed (the last good config is kept)
//   - store_error: the node cannot reach the store
//   - dispatch_paused: the node starts no new runs (a string reason, or true)
//   - notify_failing: undelivered notifications with errors on a channel
//   - notify_waiting: undelivered notifications whose channel is not configured now
//   - projection_failing: changes not yet shown in the external tracker (retried)
//   - tracker_error: the external tracker is unreachable or rate limited (no card is touched)
//   - tracker_refused: the tracker refused a projection (the card stays where drover put it)
//   - forge_error: the forge (workspace.git.pull_request) failed opening or reading a pull
//     request (a refused token, an unreachable API); retried
//   - tracker_fault: part of one issue's data (a comment, its fields, its refresh) could not be
//     taken by the tracker's sync; only that issue's card is held, the message names the issue,
//     the comment and the reason
type Error struct {
	Code    string     `json:"code"`
	Source  string     `json:"source"` // "node:NAME" or "outbox:CHANNEL"
	Message string     `json:"message"`
	Since   *time.Time `json:"since"`
	// Card is the identifier of the card the error is about, when it is
	// about one (tracker_fault).
	Card string `json:"card,omitempty"`
}

// Node is one dispatcher process.
type Node struct {
	Name     string     `json:"name"`
	PID      int        `json:"pid"`
	LastTick *time.Time `json:"last_tick"`
	SeenAt   time.Time  `json:"seen_at"`
	Running  int        `json:"running"`
	Stale    bool       `json:"stale"` // not seen for over StaleAfter
}

// Column is a board column with its card count.
type Column struct {
	Name  string     `json:"name"`
	Role  board.Role `json:"role"`
	Count int        `json:"count"`
}

// ListCap bounds blocked[] and parked[]; counts carry the totals.
const ListCap = 200

// StaleAfter marks a node stale when it has not touched the store for this long.
const StaleAfter = 2 * time.Minute

// LimitUnknown is MaxAttempts when the limit is not known: the status was
// read beside a WORKFLOW.md that does not load, and a running serve keeps
// its last good config (max_attempts 0 is refused, so 0 means nothing else).
const LimitUnknown = 0

// LimitsUnknown marks the attempt limits of s as unknown (LimitUnknown),
// for a status read beside a refused WORKFLOW.md: the limits the refused
// file falls back to are not the ones serve applies.
func (s *State) LimitsUnknown() {
	for i := range s.Running {
		s.Running[i].MaxAttempts = LimitUnknown
	}
	for i := range s.Retrying {
		s.Retrying[i].MaxAttempts = LimitUnknown
	}
}
