// Package store is the seam between drover and its durable state. Two backends
// sit behind it (SQLite for the embedded default, PostgreSQL for several
// processes sharing a board) and one conformance suite holds both to the same
// behaviour (store/storetest).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Errors callers branch on.
var (
	// ErrNotFound: no such card, run or row.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a guard of a Change failed (the card's version moved on, the
	// claim is not the writer's, or the run already has an outcome). Nothing
	// of the change was written.
	ErrConflict = errors.New("conflict: the card changed underneath this write")
	// ErrSchemaTooNew: the database was migrated by a newer drover.
	ErrSchemaTooNew = errors.New("database schema is newer than this drover")
	// ErrUnavailable wraps errors talking to the database (it went away).
	ErrUnavailable = errors.New("store unavailable")
	// ErrNodeHeld: TouchNode refused, another live process holds the name.
	ErrNodeHeld = errors.New("node name held by another process")
)

// Store is drover's durable state.
type Store interface {
	// CreateCard allocates the next identifier (prefix-N, never reused), inserts
	// the card and its "created" event in one transaction.
	CreateCard(ctx context.Context, prefix string, c board.Card, actor string) (board.Card, error)
	// GetCard finds a card by id or identifier.
	GetCard(ctx context.Context, ref string) (board.Card, error)
	ListCards(ctx context.Context, f CardFilter) ([]board.Card, error)
	CountByState(ctx context.Context) (map[string]int, error)

	// Apply writes a Change in one transaction, or nothing (ErrConflict).
	Apply(ctx context.Context, ch Change) error
	// ApplyAll writes several Changes in one transaction, each still all or
	// nothing on its own: a change whose guard fails (ErrConflict, a
	// *CycleError) is left out whole and its error is at its index in
	// refused, while the others are written. err is about the transaction
	// as a whole (the store is unavailable, the database refused it): then
	// nothing at all was written and refused is nil. The events of the
	// written changes get seq numbers in the order of chs.
	ApplyAll(ctx context.Context, chs []Change) (refused []error, err error)
	// Heartbeat extends the lease of a claim still held by (owner, epoch);
	// ErrConflict when the claim is gone or has another epoch. It does not
	// bump the card's version.
	Heartbeat(ctx context.Context, cardID, owner string, epoch int64, until time.Time) error
	// HeartbeatAll extends the leases of all of owner's claims named in
	// epochs (card id → fencing epoch) to until, each only while the stored
	// claim is still (owner, that epoch), in one statement per 500 claims.
	// lost lists the cards of epochs whose claim is gone or has another
	// epoch (not renewed). No version bump.
	HeartbeatAll(ctx context.Context, owner string, epochs map[string]int64, until time.Time) (lost []string, err error)
	// UpdateRunProgress records live figures of an open run (no version bump).
	UpdateRunProgress(ctx context.Context, runID string, p RunProgress) error

	GetRun(ctx context.Context, id string) (board.Run, error)
	ListRuns(ctx context.Context, f RunFilter) ([]board.Run, error)
	ListEvents(ctx context.Context, f EventFilter) ([]board.Event, error)
	ListComments(ctx context.Context, cardID string) ([]board.Comment, error)

	// Outbox: durable side effects. Keys are unique: adding an existing key is a no-op.
	DueOutbox(ctx context.Context, now time.Time, limit int) ([]OutboxItem, error)
	MarkOutbox(ctx context.Context, id string, r OutboxResult) error
	ListOutbox(ctx context.Context, f OutboxFilter) ([]OutboxItem, error)

	// Agent profile states (breakers, pauses).
	ListAgentStates(ctx context.Context) ([]AgentState, error)

	// Spend sums cost_usd of runs claimed at or after since (in-flight runs
	// included with their latest reported cost). cardID "" means all cards.
	Spend(ctx context.Context, since time.Time, cardID string) (float64, error)

	// Nodes: each dispatcher process records itself here. A name is held by
	// one process (Node.Instance) at a time: TouchNode writes the row only
	// when no row has the name, the row is n.Instance's, its LeaseUntil has
	// passed (by the store's clock), or its instance is n.Supersedes; else
	// it writes nothing and returns ErrNodeHeld. The check and the write are
	// one statement, so of two processes claiming a name at once one wins.
	TouchNode(ctx context.Context, n Node) error
	ListNodes(ctx context.Context) ([]Node, error)

	// Watch returns a channel that receives (coalesced) whenever the store may
	// have changed, including by another process. Closed when ctx ends.
	// A change that writes nothing but runs' live figures (Change.Progress
	// alone) and lease renewals (HeartbeatAll) need not be announced (on
	// PostgreSQL they are not; SQLite's watch sees every commit): nothing
	// waits on them, and a fleet's nodes flush them several times a second.
	Watch(ctx context.Context) <-chan struct{}
	// TryLead takes or keeps housekeeping leadership for node for ttl; true
	// when node is the leader now.
	TryLead(ctx context.Context, node string, ttl time.Duration) (bool, error)

	Ping(ctx context.Context) error
	Close() error
	// Backend is "sqlite" or "postgres".
	Backend() string
}

// Change is one atomic unit of writes. Guards are checked first; if any fails
// the whole change is refused with ErrConflict and nothing is written.
type Change struct {
	// Card, when set, replaces the stored card whose version must equal
	// Card.Version; the stored version becomes Card.Version+1.
	Card *board.Card
	// ClaimGuard, when set, requires the stored claim to be exactly this owner
	// and epoch (fencing): a stale owner's late write is refused.
	ClaimGuard *board.Claim
	// LeaseEndedBy, with ClaimGuard, also requires the stored claim's lease
	// to have ended at or before this time: recovery takes only a lease that
	// is still expired when it writes, never one its owner renewed meanwhile
	// (heartbeats do not move the card's version).
	LeaseEndedBy *time.Time
	// CheckBlockers, with Card, refuses the change with a *CycleError when
	// Card.BlockedBy would make the card wait on itself, directly or through
	// other cards. The check runs inside the transaction under a lock every
	// such change takes first, so two edits at once cannot each pass alone
	// and together close a cycle.
	CheckBlockers bool
	// NewRun is inserted. Its (card, retry epoch, attempt) must be unique.
	NewRun *board.Run
	// Run replaces a stored run. When RunMustBeOpen, the stored run must have
	// no outcome yet: routing the same run twice is refused.
	Run           *board.Run
	RunMustBeOpen bool
	// RunUnreported, with Run, also requires the stored run to have no
	// agent report yet: routing that read none decided without one, and a
	// report that landed after its read (drover_block, drover_ask_human,
	// drover_done) refuses the write with ErrConflict, so routing reads
	// and decides again with the report.
	RunUnreported bool
	Events        []board.Event
	Comments      []board.Comment
	Outbox        []OutboxItem
	AgentState    *AgentState
	// Progress records live figures of open runs (each by its RunID), as
	// UpdateRunProgress does: no guard of its own, and a run that has an
	// outcome already is left as it is.
	Progress []RunProgress

	// AgentGuard, when set, requires the agent profile's stored state to be
	// still at Version (0: no row): a routing decided on the breaker as it
	// read it (a failure the profile may be held for) is refused when the
	// breaker changed meanwhile, and decided again.
	AgentGuard *AgentGuard

	// Uncount marks the finished runs of Uncount.Agent with that failure
	// fingerprint, finished since Uncount.Since, as not counted toward their
	// cards' max_attempts: their failure turned out to be their profile's (a
	// hold, policy/hold.go). It is applied after AgentState, so it sees the
	// runs that routings guarded on the breaker committed first.
	Uncount *Uncount

	// AgentCall, when set, is a write on behalf of a live run's agent
	// (drover mcp): the run must still be open, else ErrConflict. With
	// ClaimGuard the claim is checked on AgentCall.CardID.
	AgentCall *AgentCall

	// LiveCap, with NewRun, refuses the change (ErrConflict) when it would
	// leave more than Max open runs of Agent in the whole store, its own
	// new run counted: a profile's max_concurrent across every node sharing
	// the store. Changes capping one agent are serialised (PostgreSQL: a
	// transaction-scoped advisory lock), so two nodes cannot both pass.
	LiveCap *LiveCap
}

// LiveCap is a profile's cap of open runs.
type LiveCap struct {
	Agent string
	Max   int
}

// Uncount selects the runs a hold uncounts.
type Uncount struct {
	Agent, Fingerprint string
	Since              time.Time
}

// AgentGuard names an agent profile's state and the version it must have.
type AgentGuard struct {
	Name    string
	Version int64
}

// AgentCall is the run an agent's call is for and, for a report, what it
// reported.
type AgentCall struct {
	RunID, CardID string
	// Report is stored on the run; the change is refused with ErrConflict
	// when the run has a report already (one block, ask or done per run).
	Report *board.AgentReport
	// Bound, when set, caps what the call adds: the change is refused with
	// a *LimitError when the run, or the card, holds that many already.
	Bound *AgentBound
}

// AgentBound caps the agent-written rows of one kind a call may add to:
// comments (the comments table, by an agent:… author) or progress notes
// (agent_progress events). A negative cap is no cap.
type AgentBound struct {
	Kind    string // BoundComments or BoundProgress
	PerRun  int
	PerCard int
}

// Kinds of agent-written rows an AgentBound caps.
const (
	BoundComments = "comments"
	BoundProgress = "progress notes"
)

// LimitError refuses an agent's call that would pass an AgentBound: the
// run (or the card) holds Count of Kind already, the cap being Limit.
type LimitError struct {
	Kind    string
	PerCard bool // the card's cap, else the run's
	Limit   int
	Count   int
}

func (e *LimitError) Error() string {
	scope := "this run"
	if e.PerCard {
		scope = "this card"
	}
	return fmt.Sprintf("%s holds %d agent %s already; the limit is %d", scope, e.Count, e.Kind, e.Limit)
}

// CycleError refuses a Change with CheckBlockers whose card would wait on
// itself: through Blocker (an id in its BlockedBy), along Path (identifiers
// from Blocker to the card that waits on it).
type CycleError struct {
	Card    string // the card's identifier
	Blocker string
	Path    []string
}

func (e *CycleError) Error() string {
	if len(e.Path) < 2 { // the two wait on each other directly
		return fmt.Sprintf("%s already waits on %s: the cards would wait on each other forever", e.Path[0], e.Card)
	}
	return fmt.Sprintf("%s already waits on %s (%s): the cards would wait on each other forever", e.Path[0], e.Card, strings.Join(e.Path, " → "))
}

// CardFilter selects cards. Zero values mean "any".
type CardFilter struct {
	// IDs keeps the cards with these ids (a dispatcher reading the cards
	// of a group of runs at once).
	IDs    []string
	States []string
	Label  string
	Agent  string
	// Claimed: nil any; true only claimed cards; false only unclaimed.
	Claimed *bool
	// LeaseExpiredBefore selects claimed cards whose lease ended before it.
	LeaseExpiredBefore *time.Time
	// DueBy selects cards with next_attempt_at empty or at or before it.
	DueBy *time.Time
	// ScheduledAfter selects cards whose next_attempt_at is after it.
	ScheduledAfter *time.Time
	// External selects the card mirroring one tracker issue, by its
	// board.External.ExternalKey ("github:42").
	External string
	// Tracked selects only cards that mirror an external tracker's issue.
	Tracked bool
	// TrackerKey selects the cards mirroring an issue people call so
	// (board.External.Key: "acme/app#7", "ENG-12"), compared without
	// regard to case. Two trackers may both have an issue of that key.
	TrackerKey string
	Query      string // substring of title or identifier
	Limit      int    // 0 = no limit
	Offset     int
	Order      CardOrder
}

// CardOrder is the order ListCards returns cards in. A value other than the
// constants below is refused with an error.
type CardOrder string

// Card orders.
const (
	// OrderBoard (the zero value) is board order: priority (no priority
	// after 4), then age, then id.
	OrderBoard CardOrder = ""
	// OrderUpdated is the most recently updated first.
	OrderUpdated CardOrder = "updated"
	// OrderNextAttempt is the soonest scheduled retry first (cards with no
	// retry scheduled last).
	OrderNextAttempt CardOrder = "next_attempt"
)

// RunFilter selects runs.
type RunFilter struct {
	CardID string
	// CardIDs keeps the runs of any of these cards.
	CardIDs    []string
	RetryEpoch *int
	Open       *bool
	Node       string
	// ClaimedSince keeps runs claimed at or after it (index runs_claimed).
	ClaimedSince *time.Time
	// Agent and Fingerprint keep the runs of that profile and that failure
	// fingerprint; FinishedSince those finished at or after it (a hold's
	// window, with the index runs_agent_finished).
	Agent         string
	Fingerprint   string
	FinishedSince *time.Time
	// Outcome keeps the runs that ended so ("" any).
	Outcome board.Outcome
	Limit   int // 0 = no limit; newest first when set with Newest
	Newest  bool
	// Offset skips that many runs of the order (with Limit: paging).
	Offset int
}

// EventFilter selects events with Seq > SinceSeq, oldest first.
type EventFilter struct {
	CardID   string
	SinceSeq int64
	Since    *time.Time
	Limit    int
	Newest   bool // the newest Limit events (still returned oldest first)
}

// RunProgress are the live figures of a running run.
type RunProgress struct {
	// RunID names the run in Change.Progress (UpdateRunProgress takes the
	// run's id as an argument instead).
	RunID      string
	LastOutput string
	TokensIn   int64
	TokensOut  int64
	CostUSD    float64
	StartedAt  *time.Time
	LogPath    string
	Workspace  string
	// Argv and EnvNames, when Argv is not nil, record what the agent ran
	// (see board.Run); nil leaves them as they are.
	Argv     []string
	EnvNames []string
}

// OutboxItem is a durable side effect with an idempotency key.
type OutboxItem struct {
	ID          string          `json:"id"`
	Key         string          `json:"key"`
	Channel     string          `json:"channel"` // slack, webhook, tracker
	Event       string          `json:"event"`   // blocked, gave_up, parked, profile_paused, …
	CardID      string          `json:"card_id"`
	RunID       string          `json:"run_id"`
	Payload     json.RawMessage `json:"payload"`
	CreatedAt   time.Time       `json:"created_at"`
	Attempts    int             `json:"attempts"`
	NextAt      time.Time       `json:"next_at"`
	DeliveredAt *time.Time      `json:"delivered_at"`
	LastError   string          `json:"last_error"`
	Dead        bool            `json:"dead"` // gave up delivering
}

// OutboxResult records one delivery try.
type OutboxResult struct {
	Delivered bool
	At        time.Time
	Error     string
	NextAt    time.Time // when to try again (not delivered)
	Dead      bool
	// Waiting: no try was made (the row's channel is not configured now);
	// the row waits for one without spending its attempts.
	Waiting bool
}

// OutboxFilter selects outbox rows.
type OutboxFilter struct {
	CardID  string
	Pending *bool
	Limit   int
}

// AgentState is the persisted state of one agent profile's breaker.
type AgentState struct {
	Name      string          `json:"name"`
	State     string          `json:"state"` // closed, open, half_open, paused
	Kind      string          `json:"kind"`
	Reason    string          `json:"reason"`
	Until     *time.Time      `json:"until"`
	Data      json.RawMessage `json:"data"` // the breaker's own bookkeeping
	UpdatedAt time.Time       `json:"updated_at"`
	// Version guards read-modify-write: a Change writes the state only if the
	// stored version still equals it (0: only if no row exists yet). Negative
	// writes unconditionally (an operator's resume).
	Version int64 `json:"version"`
}

// Node is one dispatcher process.
type Node struct {
	Name      string     `json:"name"`
	PID       int        `json:"pid"`
	StartedAt time.Time  `json:"started_at"`
	SeenAt    time.Time  `json:"seen_at"`
	Running   int        `json:"running"`
	LastTick  *time.Time `json:"last_tick"`
	// Status is what the node wants operators to see (config errors, store
	// outages, paused dispatch), as a JSON object.
	Status json.RawMessage `json:"status"`
	// Instance is the random id of the process holding the name; it holds
	// it until LeaseUntil unless it renews it.
	Instance   string    `json:"instance"`
	LeaseUntil time.Time `json:"lease_until"`
	// Supersedes, given to TouchNode only, is an instance known to be dead
	// whose unexpired hold may be taken over. It is not stored.
	Supersedes string `json:"-"`
}

// Bool is a helper for filters.
func Bool(b bool) *bool { return &b }
