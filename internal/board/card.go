package board

import (
	"encoding/json"
	"time"
)

// Card is the unit of work.
type Card struct {
	ID            string          `json:"id"`
	Identifier    string          `json:"identifier"`
	Title         string          `json:"title"`
	Body          string          `json:"body"`
	State         string          `json:"state"`
	StateReason   string          `json:"state_reason"`
	Priority      int             `json:"priority"` // 1 highest … 4; 0 means none (sorted last)
	Labels        []string        `json:"labels"`
	Agent         string          `json:"agent"`
	Spec          json.RawMessage `json:"spec"` // always a JSON object ("{}" when empty)
	BlockedBy     []string        `json:"blocked_by"`
	BlockReason   *BlockReason    `json:"block_reason"`
	GaveUp        *GaveUp         `json:"gave_up"`
	NextAttemptAt *time.Time      `json:"next_attempt_at"`
	RetryEpoch    int             `json:"retry_epoch"`
	Claim         *Claim          `json:"claim"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	// External is the issue of an external tracker this card mirrors (nil
	// for a card of drover's own board).
	External *External `json:"external"`
	// PullRequest is the pull request of the card's branch (nil: none).
	PullRequest *PullRequest `json:"pull_request"`
	// Version increases with every write; stores apply a change only when the
	// version they hold equals the one the writer read (compare-and-set).
	Version int64 `json:"version"`
}

// External links a card to the issue it mirrors in an external tracker.
type External struct {
	Tracker string `json:"tracker"`       // github, linear
	ID      string `json:"id"`            // the tracker's stable id (GitHub's issue number, Linear's issue id)
	Key     string `json:"key,omitempty"` // what people call it: owner/name#42, ENG-12
	URL     string `json:"url,omitempty"`
}

// ExternalKey is the store's unique key for the issue: "<tracker>:<id>".
func (e *External) ExternalKey() string {
	if e == nil {
		return ""
	}
	return e.Tracker + ":" + e.ID
}

// BlockReason answers what is wrong, where, and how to continue.
type BlockReason struct {
	Kind  string `json:"kind,omitempty"`
	What  string `json:"what"`
	Where string `json:"where"`
	How   string `json:"how"`
}

// GaveUp is stamped on a card when a budget ran out.
type GaveUp struct {
	RunID    string    `json:"run_id"`
	Attempts int       `json:"attempts"`
	Kind     string    `json:"kind"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

// Claim is a lease on a card. Every owner write is conditional on (owner, epoch).
type Claim struct {
	Owner      string    `json:"owner"`
	Epoch      int64     `json:"epoch"`
	LeaseUntil time.Time `json:"lease_until"`
}

// Outcome is how a run ended.
type Outcome string

// Run outcomes.
const (
	OutcomeNone        Outcome = ""
	OutcomeSucceeded   Outcome = "succeeded"
	OutcomeFailed      Outcome = "failed"
	OutcomeReleased    Outcome = "released"
	OutcomeBlocked     Outcome = "blocked"
	OutcomeParked      Outcome = "parked"
	OutcomeDeferred    Outcome = "deferred"
	OutcomeInterrupted Outcome = "interrupted"
	OutcomeCancelled   Outcome = "cancelled"
	OutcomeLeaseLost   Outcome = "lease_lost"
)

// Run is one attempt on a card. The attempt number is assigned at claim time
// and stored; it is never recounted from memory.
type Run struct {
	ID         string     `json:"id"`
	CardID     string     `json:"card_id"`
	Attempt    int        `json:"attempt"`
	RetryEpoch int        `json:"retry_epoch"`
	ClaimEpoch int64      `json:"claim_epoch"`
	Node       string     `json:"node"`
	Agent      string     `json:"agent"`
	Outcome    Outcome    `json:"outcome"`
	Kind       string     `json:"kind"`
	Counted    bool       `json:"counted"`
	Decision   string     `json:"decision"`
	ExitCode   *int       `json:"exit_code"`
	Error      string     `json:"error"`
	ClaimedAt  time.Time  `json:"claimed_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	TokensIn   int64      `json:"tokens_in"`
	TokensOut  int64      `json:"tokens_out"`
	CostUSD    float64    `json:"cost_usd"`
	LogPath    string     `json:"log_path"`
	Workspace  string     `json:"workspace"`
	LastOutput string     `json:"last_output"`
	// SessionID is the agent's own conversation id (Claude Code's
	// session_id, Codex's thread_id), "" when the agent reported none; the
	// attempt after a human's answer resumes it.
	SessionID string `json:"session_id,omitempty"`
	// Argv is the command line the agent ran, argv[0] first, with secrets
	// redacted; EnvNames the names (never the values) of the environment
	// variables it was given. Both are empty until the agent starts, and
	// for kinds that run inside drover.
	Argv     []string `json:"argv"`
	EnvNames []string `json:"env_names"`
	// Report is what the agent itself said about how the run ends
	// (drover mcp, drover run), nil when it said nothing. It is written
	// once, while the run is open, and never by the dispatcher.
	Report *AgentReport `json:"report"`
	// Fingerprint names the run's failure by its shape (policy.Fingerprint:
	// the kind and the normalised error), "" for a success or a run not
	// routed yet. The same fingerprint across cards is the profile's
	// problem; the same one again on a card with nothing changed blocks it.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Basis is what the attempt ran with, as a hash per part (the card's
	// fields, the profile's config, the workspace setup, the verify step,
	// the prompt), set at claim: two attempts with the same basis and no
	// human act between them had nothing new.
	Basis map[string]string `json:"basis,omitempty"`
	// Verify is what the verify step (WORKFLOW.md verify:) found after the
	// agent's clean exit; nil when no step is configured or it did not run.
	Verify *VerifyResult `json:"verify,omitempty"`
	// Changes is what the attempt did to the card's git branch
	// (workspace.git): commits, files, lines, a dirty tree, the push; nil
	// for a workflow without workspace.git or a run that did not get that far.
	Changes *Changes `json:"changes,omitempty"`
}

// VerifyResult is the verify step of one run: its commands run in the
// workspace after the agent's clean exit, and decide whether it is done.
type VerifyResult struct {
	Passed bool `json:"passed"`
	Ran    int  `json:"ran"` // commands run (the step stops at the first failure)
	// Command, ExitCode (-1 when it was stopped or never started), TimedOut
	// and Output (its last output, at most 8 KiB) are the failed command's.
	Command    string `json:"command,omitempty"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Output     string `json:"output,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// Open reports whether the run has no outcome yet.
func (r Run) Open() bool { return r.Outcome == OutcomeNone }

// Event is an append-only audit record.
type Event struct {
	Seq    int64           `json:"seq"`
	At     time.Time       `json:"at"`
	CardID string          `json:"card_id"`
	RunID  string          `json:"run_id"`
	Type   string          `json:"type"`
	Actor  string          `json:"actor"`
	Reason string          `json:"reason"`
	Data   json.RawMessage `json:"data"`
}

// Comment is a note on a card by an operator, the dispatcher or an agent.
type Comment struct {
	ID     string    `json:"id"`
	CardID string    `json:"card_id"`
	Author string    `json:"author"`
	Body   string    `json:"body"`
	At     time.Time `json:"at"`
}

// Event types.
const (
	EvCreated   = "created"
	EvEdited    = "edited"
	EvMoved     = "moved"
	EvCommented = "commented"
	EvClaimed   = "claimed"
	EvStarted   = "started"
	EvFinished  = "finished"
	EvReleased  = "released"
	EvRetry     = "retry_scheduled"
	EvDeferred  = "deferred"
	EvBlocked   = "blocked"
	EvGaveUp    = "gave_up"
	EvParked    = "parked"
	EvAnswered  = "answered"
	EvResumed   = "resumed"
	EvReopened  = "reopened"
	EvCancelled = "cancelled"
	EvRecovered = "recovered"
	EvLeaseLost = "lease_lost"
)

// Actor names who did something: "operator", "operator:NAME", "dispatcher:NODE", "agent:PROFILE".
const (
	ActorOperator = "operator"
)
