package tracker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/notify"
	"github.com/drover-dev/drover/internal/store"
)

// EvRefused is the audit event recorded on a card when the tracker refused a
// projection of it: the card stays where drover put it.
const EvRefused = "tracker_refused"

// Deliverer writes due projection rows to the tracker, oldest first per
// card: a card's row waits while an older one of the same card is pending,
// so the tracker sees the moves in the order drover made them. It runs on
// the leader (Lead), beside notify.Worker, which leaves these rows alone.
type Deliverer struct {
	Store   store.Store
	Tracker Tracker
	Lead    func(ctx context.Context) (bool, error) // nil: always
	Now     func() time.Time
	Log     *slog.Logger
	// Refused is told each refusal in words (drover status shows the last).
	Refused func(msg string)

	// The retry policy of the rows (notify.Retry's, for the same
	// reasons); 0 takes notify's default.
	MaxAttempts int
	BaseBackoff time.Duration
	MaxBackoff  time.Duration

	mu    sync.Mutex
	until time.Time // a rate limit or outage holds every delivery until then
	down  bool      // the last try failed for the tracker's sake (reported once)
}

// Tick delivers the projections due now; failures are recorded on their
// rows, never returned. err is the store's.
func (w *Deliverer) Tick(ctx context.Context) (delivered, failed int, err error) {
	if w.Lead != nil {
		if ok, err := w.Lead(ctx); err != nil || !ok {
			return 0, 0, err
		}
	}
	now := w.now()
	w.mu.Lock()
	hold := w.until
	w.mu.Unlock()
	if now.Before(hold) {
		return 0, 0, nil
	}
	due, err := w.Store.DueOutbox(ctx, now, 500)
	if err != nil {
		return 0, 0, err
	}
	var rows []store.OutboxItem
	for _, it := range due {
		if it.Channel == Channel {
			rows = append(rows, it)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].CreatedAt.Equal(rows[j].CreatedAt) {
			return rows[i].CreatedAt.Before(rows[j].CreatedAt)
		}
		return rows[i].ID < rows[j].ID
	})
	held := map[string]time.Time{} // card → when its oldest pending row is due
	// suspect is a failed row not yet known to be the tracker's trouble or
	// its own card's: a row of another card that the tracker takes next
	// says it was the card's (only that card's rows wait); one that fails
	// too says it is the tracker's (every row waits).
	var suspect *failure
	for i, it := range rows {
		if at, ok := held[it.CardID]; ok {
			if err := w.wait(ctx, it, at, "waits for an older projection of the card"); err != nil {
				return delivered, failed, err
			}
			continue
		}
		pending, err := w.Store.ListOutbox(ctx, store.OutboxFilter{CardID: it.CardID, Pending: store.Bool(true)})
		if err != nil {
			return delivered, failed, err
		}
		if older, ok := firstOf(pending); ok && older.ID != it.ID {
			// An older row of the card is not delivered yet: this one waits
			// for it, out of the due rows (notifications share them).
			held[it.CardID] = older.NextAt
			if err := w.wait(ctx, it, older.NextAt, "waits for an older projection of the card"); err != nil {
				return delivered, failed, err
			}
			continue
		}
		res, f := w.deliver(ctx, it)
		if err := w.Store.MarkOutbox(ctx, it.ID, res); err != nil {
			return delivered, failed, fmt.Errorf("tracker: recording delivery of %s: %w", it.Key, err)
		}
		if res.Delivered {
			delivered++
			if suspect != nil {
				// The tracker answers: the earlier failure was its card's.
				w.log().Warn("tracker: a projection of one card fails while the others go through; only that card's wait",
					"card_id", suspect.row.CardID, "key", suspect.row.Key, "until", suspect.res.NextAt, "error", suspect.err)
				suspect = nil
			}
			continue
		}
		failed++
		held[it.CardID] = res.NextAt
		if f == nil {
			continue
		}
		f.row, f.res = it, res
		if !f.limited && (suspect == nil || suspect.row.CardID == it.CardID) {
			suspect = f // try another card's row before blaming the tracker
			continue
		}
		// The tracker is the trouble (a rate limit, or two cards failing in
		// a row): the other due rows wait too, so they do not crowd the due
		// rows the notifier reads.
		w.hold(res.NextAt, f.log, f.err, true)
		for _, rest := range rows[i+1:] {
			if err := w.wait(ctx, rest, res.NextAt, "waits for the tracker: "+res.Error); err != nil {
				return delivered, failed, err
			}
		}
		return delivered, failed, nil
	}
	if suspect != nil {
		// No other card's row to tell by: the row waits on its own backoff
		// (the tracker's trouble or the card's, one try each time).
		w.hold(suspect.res.NextAt, suspect.log, suspect.err, false)
	}
	return delivered, failed, nil
}

// failure is a row the tracker failed for its own sake (not refused).
type failure struct {
	row     store.OutboxItem
	res     store.OutboxResult
	err     error
	log     *slog.Logger
	limited bool // a rate limit: the tracker's by definition
}

// wait moves a row's next try to at without spending one of its attempts.
func (w *Deliverer) wait(ctx context.Context, it store.OutboxItem, at time.Time, why string) error {
	now := w.now()
	if !at.After(now) {
		at = now.Add(time.Second)
	}
	if err := w.Store.MarkOutbox(ctx, it.ID, store.OutboxResult{At: now, NextAt: at, Waiting: true, Error: why}); err != nil {
		return fmt.Errorf("tracker: deferring %s: %w", it.Key, err)
	}
	return nil
}

// firstOf is the oldest pending tracker row (ListOutbox orders by creation).
func firstOf(rows []store.OutboxItem) (store.OutboxItem, bool) {
	for _, r := range rows {
		if r.Channel == Channel {
			return r, true
		}
	}
	return store.OutboxItem{}, false
}

// deliver applies one row's projection and says how to record it; f is
// set when the tracker failed for its own sake (a rate limit, an outage, or
// this row's card alone: Tick tells which).
func (w *Deliverer) deliver(ctx context.Context, it store.OutboxItem) (store.OutboxResult, *failure) {
	now := w.now()
	log := w.log().With("card_id", it.CardID, "key", it.Key, "event", it.Event, "attempt", it.Attempts+1)
	var pr Projection
	if err := json.Unmarshal(it.Payload, &pr); err != nil || pr.IssueID == "" {
		return store.OutboxResult{At: now, Dead: true, Error: fmt.Sprintf("payload is not a tracker projection: %v", err)}, nil
	}
	err := w.apply(ctx, pr)
	if err == nil {
		w.recovered(log)
		log.Info("tracker projection delivered", "issue", pr.IssueKey, "to", pr.To, "comment", pr.Comment != "")
		return store.OutboxResult{Delivered: true, At: now}, nil
	}
	var rl *RateLimitError
	switch {
	case errors.As(err, &rl):
		// Waiting: a rate limit spends none of the row's attempts.
		return store.OutboxResult{At: now, NextAt: rl.Until, Error: err.Error(), Waiting: true}, &failure{err: err, log: log, limited: true}
	case errors.Is(err, ErrRefused):
		log.Warn("tracker refused a projection; the card stays where drover put it", "issue", pr.IssueKey, "error", err)
		w.recordRefusal(ctx, it, pr, err, now)
		if w.Refused != nil {
			w.Refused(fmt.Sprintf("%s refused showing %s of %s: %v", w.Tracker.Kind(), describe(pr), pr.Identifier, err))
		}
		return store.OutboxResult{At: now, Dead: true, Error: "refused: " + err.Error()}, nil
	}
	r := notify.Retry{MaxAttempts: w.MaxAttempts, BaseBackoff: w.BaseBackoff, MaxBackoff: w.MaxBackoff}
	if r.Dead(it.Attempts + 1) {
		log.Error("tracker projection dead: delivery abandoned", "error", err)
		return store.OutboxResult{At: now, Dead: true, Error: err.Error()}, &failure{err: err, log: log}
	}
	next := now.Add(r.Backoff(it.Attempts+1, 0))
	return store.OutboxResult{At: now, NextAt: next, Error: err.Error()}, &failure{err: err, log: log}
}

// apply makes the tracker show pr: the move, then the comment.
func (w *Deliverer) apply(ctx context.Context, pr Projection) error {
	caps := w.Tracker.Caps()
	if pr.To != "" && (caps.Labels || caps.States) {
		if err := w.Tracker.Move(ctx, pr.IssueID, pr.From, pr.To); err != nil {
			return err
		}
	}
	if pr.Comment != "" && caps.Comments {
		return w.Tracker.Comment(ctx, pr.IssueID, pr.Comment)
	}
	return nil
}

func (w *Deliverer) recordRefusal(ctx context.Context, it store.OutboxItem, pr Projection, err error, now time.Time) {
	ev := board.Event{At: now, CardID: it.CardID, Type: EvRefused, Actor: "tracker:" + w.Tracker.Kind(),
		Reason: fmt.Sprintf("%s refused showing %s: %v", w.Tracker.Kind(), describe(pr), err)}
	if e := w.Store.Apply(ctx, store.Change{Events: []board.Event{ev}}); e != nil {
		w.log().Warn("tracker: could not record a refused projection", "card_id", it.CardID, "error", e)
	}
}

func describe(pr Projection) string {
	switch {
	case pr.To != "" && pr.Comment != "":
		return "the move to " + string(pr.To) + " and its comment"
	case pr.To != "":
		return "the move to " + string(pr.To)
	}
	return "a comment"
}

// hold stops every delivery until t when all is set (the tracker is the
// trouble); the first failure of an outage is logged as an error, the rest
// are not (reported once).
func (w *Deliverer) hold(t time.Time, log *slog.Logger, err error, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if all && t.After(w.until) {
		w.until = t
	}
	if !w.down {
		w.down = true
		log.Error("tracker unreachable for projections; deliveries wait and retry", "error", err, "until", t)
	}
}

func (w *Deliverer) recovered(log *slog.Logger) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down {
		w.down = false
		log.Info("tracker reachable again; projections resume")
	}
}

func (w *Deliverer) now() time.Time { return nowOr(w.Now) }

func (w *Deliverer) log() *slog.Logger { return logOr(w.Log) }
