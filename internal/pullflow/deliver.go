package pullflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/forge"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracker"
)

// Deliverer opens the pull requests the outbox's forge rows ask for, on
// the leader: Forge.EnsurePull (one pull request per branch however often
// it is called), then the card's pull_request, a pr_opened event and,
// for a card mirroring a tracker issue, a tracker comment with the URL, in
// one change. A crash between the two leaves the row due: the next try
// finds the same pull request and records it.
type Deliverer struct {
	Store store.Store
	Forge forge.Forge
	Lead  func(ctx context.Context) (bool, error) // nil: always
	Now   func() time.Time
	Log   *slog.Logger
	// Problem is told each failure in words, and "" once a delivery
	// succeeds again (drover status shows it).
	Problem func(msg string)
	// Tracker is the kind of the tracker cards mirror ("" for none): the
	// pull request's URL is commented on the issue.
	Tracker string

	MaxAttempts int
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
}

// Tick delivers the forge rows due now; failures are recorded on their
// rows. err is the store's.
func (w *Deliverer) Tick(ctx context.Context) (delivered int, err error) {
	if w.Lead != nil {
		if ok, err := w.Lead(ctx); err != nil || !ok {
			return 0, err
		}
	}
	due, err := w.Store.DueOutbox(ctx, w.now(), 500)
	if err != nil {
		return 0, err
	}
	for _, it := range due {
		if it.Channel != Channel {
			continue
		}
		res := w.deliver(ctx, it)
		if err := w.Store.MarkOutbox(ctx, it.ID, res); err != nil {
			return delivered, fmt.Errorf("forge: recording delivery of %s: %w", it.Key, err)
		}
		if res.Delivered {
			delivered++
		}
	}
	return delivered, nil
}

func (w *Deliverer) deliver(ctx context.Context, it store.OutboxItem) store.OutboxResult {
	now := w.now()
	log := w.log().With("card_id", it.CardID, "key", it.Key, "attempt", it.Attempts+1)
	var p OpenPayload
	if err := json.Unmarshal(it.Payload, &p); err != nil || p.Branch == "" || p.CardID == "" {
		return store.OutboxResult{At: now, Dead: true, Error: fmt.Sprintf("payload is not a pull_open row: %v", err)}
	}
	if w.Forge == nil {
		return store.OutboxResult{At: now, NextAt: now.Add(time.Minute), Waiting: true, Error: "no forge configured (workspace.git.pull_request)"}
	}
	if p.Base == "" {
		return store.OutboxResult{At: now, Dead: true, Error: "the base branch is unknown: set workspace.git.base"}
	}
	c, err := w.Store.GetCard(ctx, p.CardID)
	if errors.Is(err, store.ErrNotFound) {
		return store.OutboxResult{At: now, Dead: true, Error: "the card is gone"}
	}
	if err != nil {
		return w.retry(it, now, err)
	}
	if pr := c.PullRequest; pr != nil && pr.Branch == p.Branch && pr.Number > 0 && pr.State == board.PullOpen {
		return store.OutboxResult{Delivered: true, At: now} // recorded already (a second node, a retried row)
	}
	pull, err := w.Forge.EnsurePull(ctx, forge.PullSpec{Head: p.Branch, Base: p.Base, Title: title(p), Body: body(p), Draft: p.Draft})
	var rl *forge.RateLimitError
	switch {
	case err == nil:
	case errors.As(err, &rl):
		w.problem(err.Error())
		return store.OutboxResult{At: now, NextAt: rl.Until, Waiting: true, Error: err.Error()}
	case errors.Is(err, forge.ErrRefused), errors.Is(err, forge.ErrNotFound):
		log.Error("forge refused opening the pull request", "branch", p.Branch, "error", err)
		w.problem(fmt.Sprintf("opening the pull request of %s (%s): %v", p.Identifier, p.Branch, err))
		return w.retry(it, now, err)
	default:
		log.Warn("could not open the pull request; retrying", "branch", p.Branch, "error", err)
		w.problem(fmt.Sprintf("opening the pull request of %s (%s): %v", p.Identifier, p.Branch, err))
		return w.retry(it, now, err)
	}
	if err := w.record(ctx, p, pull, now); err != nil {
		return w.retry(it, now, err)
	}
	w.problem("")
	log.Info("pull request open", "number", pull.Number, "url", pull.URL, "created", pull.Created)
	return store.OutboxResult{Delivered: true, At: now}
}

// record writes the pull request on the card with its event (and the
// tracker comment), reading the card again when it moved meanwhile.
func (w *Deliverer) record(ctx context.Context, p OpenPayload, pull forge.Pull, now time.Time) error {
	for try := 0; ; try++ {
		c, err := w.Store.GetCard(ctx, p.CardID)
		if err != nil {
			return err
		}
		c.PullRequest = &board.PullRequest{Number: pull.Number, URL: pull.URL, Branch: p.Branch, State: board.PullOpen, HeadSHA: p.Head}
		data, _ := json.Marshal(map[string]any{"number": pull.Number, "url": pull.URL, "branch": p.Branch, "created": pull.Created})
		ch := store.Change{Card: &c, Events: []board.Event{{At: now, CardID: c.ID, RunID: p.RunID, Type: board.EvPullOpened,
			Actor: "forge", Reason: fmt.Sprintf("pull request #%d for %s: %s", pull.Number, p.Branch, pull.URL), Data: data}}}
		if e := c.External; e != nil && w.Tracker != "" {
			pr, _ := json.Marshal(tracker.Projection{Tracker: e.Tracker, IssueID: e.ID, IssueKey: e.Key, Identifier: c.Identifier,
				Comment: fmt.Sprintf("drover opened pull request #%d for %s: %s", pull.Number, c.Identifier, pull.URL)})
			ch.Outbox = []store.OutboxItem{{Key: fmt.Sprintf("pull-comment:%s:%d", c.ID, pull.Number), Channel: tracker.Channel,
				Event: board.EvPullOpened, CardID: c.ID, Payload: pr}}
		}
		err = w.Store.Apply(ctx, ch)
		if !errors.Is(err, store.ErrConflict) || try >= 10 {
			return err
		}
	}
}

func (w *Deliverer) retry(it store.OutboxItem, now time.Time, err error) store.OutboxResult {
	r := notify.Retry{MaxAttempts: w.MaxAttempts, BaseBackoff: w.BaseBackoff, MaxBackoff: w.MaxBackoff}
	if r.Dead(it.Attempts + 1) {
		w.log().Error("pull request delivery abandoned", "card_id", it.CardID, "key", it.Key, "error", err)
		return store.OutboxResult{At: now, Dead: true, Error: err.Error()}
	}
	return store.OutboxResult{At: now, NextAt: now.Add(r.Backoff(it.Attempts+1, 0)), Error: err.Error()}
}

func (w *Deliverer) problem(msg string) {
	if w.Problem != nil {
		w.Problem(msg)
	}
}

func (w *Deliverer) now() time.Time {
	if w.Now != nil {
		return w.Now().UTC()
	}
	return time.Now().UTC()
}

func (w *Deliverer) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.New(slog.DiscardHandler)
}
