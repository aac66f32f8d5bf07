package status

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
)

// ErrNotFound: the identifier names no card.
var ErrNotFound = errors.New("issue not found")

// Issue is Symphony's GET /api/v1/<issue_identifier> shape for one card,
// plus the card itself.
type Issue struct {
	IssueIdentifier string         `json:"issue_identifier"`
	IssueID         string         `json:"issue_id"`
	Status          string         `json:"status"` // running, retrying, blocked, parked, or the column's role
	Workspace       IssueWorkspace `json:"workspace"`
	Attempts        IssueAttempts  `json:"attempts"`
	Running         *Running       `json:"running"`
	Retry           *Retrying      `json:"retry"`
	Logs            IssueLogs      `json:"logs"`
	RecentEvents    []IssueEvent   `json:"recent_events"`
	LastError       *string        `json:"last_error"`
	Tracked         map[string]any `json:"tracked"`
	Card            board.Card     `json:"card"`
}

// IssueWorkspace is where the card's agent works.
type IssueWorkspace struct {
	Path string `json:"path"`
}

// IssueAttempts counts the card's runs.
type IssueAttempts struct {
	RestartCount        int `json:"restart_count"`         // runs in the current retry epoch before the latest
	CurrentRetryAttempt int `json:"current_retry_attempt"` // the latest run's attempt number
}

// IssueLogs lists the card's run logs, newest first.
type IssueLogs struct {
	CodexSessionLogs []IssueLog `json:"codex_session_logs"`
}

// IssueLog is one run's log.
type IssueLog struct {
	Label string  `json:"label"`
	Path  string  `json:"path"`
	URL   *string `json:"url"`
}

// IssueEvent is a recent event.
type IssueEvent struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	Message string    `json:"message"`
}

// IssueDetail builds the Symphony issue view of the card ref (id or
// identifier, or the tracker key of the issue it mirrors: store.FindCard).
// It returns ErrNotFound for an unknown card.
func IssueDetail(ctx context.Context, st store.Store, cfg *config.Config, ref string, now time.Time) (Issue, error) {
	c, err := store.FindCard(ctx, st, ref)
	if errors.Is(err, store.ErrNotFound) {
		return Issue{}, ErrNotFound
	}
	if err != nil {
		return Issue{}, err
	}
	b := board.Default()
	maxAttempts := 10
	if cfg != nil {
		b, maxAttempts = cfg.Board, cfg.Policy.MaxAttempts
	}
	is := Issue{IssueIdentifier: c.Identifier, IssueID: c.ID, Status: string(b.RoleOf(c.State)), Card: c,
		Logs: IssueLogs{CodexSessionLogs: []IssueLog{}}, RecentEvents: []IssueEvent{}, Tracked: map[string]any{
			"state": c.State, "retry_epoch": c.RetryEpoch, "priority": c.Priority, "agent": c.Agent}}
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: c.ID, Newest: true, Limit: 50})
	if err != nil {
		return is, err
	}
	for i, r := range runs {
		if i == 0 {
			is.Workspace.Path = r.Workspace
			is.Attempts.CurrentRetryAttempt = r.Attempt
			if r.Error != "" {
				e := r.Error
				is.LastError = &e
			}
		} else if r.RetryEpoch == c.RetryEpoch {
			is.Attempts.RestartCount++
		}
		if r.LogPath != "" {
			u := "/api/v1/runs/" + r.ID + "/log"
			label := "attempt " + strconv.Itoa(r.Attempt)
			if i == 0 {
				label = "latest"
			}
			is.Logs.CodexSessionLogs = append(is.Logs.CodexSessionLogs, IssueLog{Label: label, Path: r.LogPath, URL: &u})
		}
		if r.Open() {
			started := r.ClaimedAt
			if r.StartedAt != nil {
				started = *r.StartedAt
			}
			is.Running = &Running{IssueID: c.ID, IssueIdentifier: c.Identifier, State: c.State, SessionID: r.ID,
				LastMessage: r.LastOutput, StartedAt: started.UTC(), Tokens: Tokens{r.TokensIn, r.TokensOut, r.TokensIn + r.TokensOut},
				RunID: r.ID, Title: c.Title, Agent: r.Agent, Node: r.Node, Attempt: r.Attempt, MaxAttempts: maxAttempts,
				RetryEpoch: r.RetryEpoch, ElapsedS: secs(now.Sub(started)), LastOutput: r.LastOutput, CostUSD: r.CostUSD, LogPath: r.LogPath,
				Counted: counted(ctx, st, c.ID, r.RetryEpoch)}
			is.Status = "running"
		}
	}
	if is.Running == nil && b.RoleOf(c.State) == board.RoleEligible && c.NextAttemptAt != nil && c.NextAttemptAt.After(now) {
		rt := &Retrying{IssueID: c.ID, IssueIdentifier: c.Identifier, Attempt: 1, DueAt: c.NextAttemptAt.UTC(), Error: c.StateReason,
			Title: c.Title, State: c.State, Agent: c.Agent, MaxAttempts: maxAttempts, DueInS: secs(c.NextAttemptAt.Sub(now)), Reason: c.StateReason}
		if len(runs) > 0 {
			r := runs[0]
			rt.Kind, rt.LastAttempt, rt.RunID = r.Kind, r.Attempt, r.ID
			if r.Error != "" {
				rt.Error = r.Error
			}
			if r.RetryEpoch == c.RetryEpoch {
				rt.Attempt = r.Attempt + 1
			}
		}
		rt.Counted = counted(ctx, st, c.ID, c.RetryEpoch)
		is.Retry, is.Status = rt, "retrying"
	}
	evs, err := st.ListEvents(ctx, store.EventFilter{CardID: c.ID, Newest: true, Limit: 20})
	if err != nil {
		return is, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		is.RecentEvents = append(is.RecentEvents, IssueEvent{At: evs[i].At.UTC(), Event: evs[i].Type, Message: evs[i].Reason})
	}
	return is, nil
}
