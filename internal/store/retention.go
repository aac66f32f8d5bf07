package store

import (
	"context"
	"time"
)

// Pruner is a store that can forget old history (retention, `drover gc`).
// Every method does one bounded statement, so a caller prunes a large store
// in small batches without holding the database for long. None of them
// touches an open run, the latest run of a card or an undelivered
// notification.
type Pruner interface {
	// OldRuns lists up to limit finished runs that finished before before,
	// oldest first, leaving out the latest run of each card; withLog keeps
	// only those that still name a log file.
	OldRuns(ctx context.Context, before time.Time, withLog bool, limit int) ([]OldRun, error)
	// DeleteRuns deletes those of the named runs that are still finished
	// before before and not the latest of their card, and returns how many
	// it deleted.
	DeleteRuns(ctx context.Context, ids []string, before time.Time) (int, error)
	// ForgetLogs clears the log path of the named runs (their files are gone).
	ForgetLogs(ctx context.Context, ids []string) error
	// PruneEvents deletes up to limit of the oldest events older than before.
	PruneEvents(ctx context.Context, before time.Time, limit int) (int, error)
	// PruneOutbox deletes up to limit delivered or dead notifications
	// created before before. Pending ones are never deleted.
	PruneOutbox(ctx context.Context, before time.Time, limit int) (int, error)
	// PruneAgentComments looks at up to limit comments after the one with
	// id after ("" the first), in id order (ids grow with time, so no
	// index on the time is needed), and deletes those among them that an
	// agent (author agent:…) wrote before before. next is the id to go on
	// after; done says that nothing older than before lies beyond (a
	// comment older than one after it waits for the next collection).
	// People's comments are never deleted.
	PruneAgentComments(ctx context.Context, before time.Time, after string, limit int) (deleted int, next string, done bool, err error)
	// CountPrunable counts what the cutoffs would delete (a zero time keeps
	// everything of its kind).
	CountPrunable(ctx context.Context, c Cutoffs) (Prunable, error)
	// RecordGC keeps the report of the latest collection; LastGC returns it
	// (nil before the first).
	RecordGC(ctx context.Context, r GCReport) error
	LastGC(ctx context.Context) (*GCReport, error)
}

// OldRun is a run that retention may delete or whose log it may remove.
type OldRun struct {
	ID      string
	LogPath string
}

// Cutoffs are the instants before which each kind of history is pruned; a
// zero time keeps that kind forever.
type Cutoffs struct {
	Events time.Time // events, delivered or dead notifications, and agents' comments
	Runs   time.Time
	Logs   time.Time
}

// Prunable counts what a collection would delete.
type Prunable struct {
	Events   int `json:"events"`
	Outbox   int `json:"outbox"`
	Comments int `json:"comments"` // agents' comments
	Runs     int `json:"runs"`
	Logs     int `json:"logs"` // runs whose log file would be removed
}

// GCReport is what one collection did (or, dry, would do).
type GCReport struct {
	At       time.Time `json:"at"`
	DryRun   bool      `json:"dry_run"`
	Events   int       `json:"events"`
	Outbox   int       `json:"outbox"`
	Comments int       `json:"comments"` // agents' comments
	Runs     int       `json:"runs"`
	Logs     int       `json:"logs"`      // log files removed
	LogBytes int64     `json:"log_bytes"` // their size
	// DurationMS is how long the collection took.
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}
