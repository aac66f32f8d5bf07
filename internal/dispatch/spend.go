package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// cardSpend is what a card's runs of its current retry epoch cost, in-flight
// runs included (resume opens a new epoch, and with it a fresh spend budget).
func (d *Dispatcher) cardSpend(ctx context.Context, c board.Card) (float64, error) {
	epoch := c.RetryEpoch
	runs, err := d.o.Store.ListRuns(ctx, store.RunFilter{CardID: c.ID, RetryEpoch: &epoch})
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, r := range runs {
		sum += r.CostUSD
	}
	return sum, nil
}

// overCardCap blocks a card that already spent its limit, before it is
// claimed again, and reports whether it did.
func (d *Dispatcher) overCardCap(ctx context.Context, cfg *config.Config, c board.Card) bool {
	limit := cfg.Limits.MaxCostPerCardUSD
	if limit <= 0 {
		return false
	}
	spent, err := d.cardSpend(ctx, c)
	if err != nil || spent < limit {
		return false
	}
	dec := policy.SpendBlock(c, policy.SpendLimits{PerDay: cfg.Limits.MaxCostPerDayUSD, PerCard: limit}, spent, "", blockedColumn(cfg))
	now := d.o.Now().UTC()
	next := c
	next.State, next.StateReason, next.BlockReason, next.NextAttemptAt = dec.NextState, dec.Explain, dec.BlockReason, nil
	ch := store.Change{Card: &next,
		Events:   []board.Event{{At: now, CardID: c.ID, Type: board.EvBlocked, Actor: d.actor(), Reason: dec.Explain}},
		Comments: []board.Comment{{CardID: c.ID, Author: d.actor(), Body: reasonText(dec.BlockReason), At: now}},
		Outbox: d.outbox(cfg, Notice{Event: policy.NotifyBlocked, Key: fmt.Sprintf("%s/spend/%d/blocked", c.ID, c.RetryEpoch),
			Card: next, Reason: dec.BlockReason, At: now}),
	}
	if err := d.o.Store.Apply(ctx, ch); err != nil && !errors.Is(err, store.ErrConflict) {
		d.log.Error("could not block a card over its spend limit", "card_id", c.ID, "identifier", c.Identifier, "err", err)
	}
	return true
}

// noticeOnce queues a notification that is not about a run (spend cap,
// config error); the key makes it once per day or per broken config.
func (d *Dispatcher) noticeOnce(ctx context.Context, cfg *config.Config, event, key, text string) {
	rows := d.outbox(cfg, Notice{Event: event, Key: key, Text: text, At: d.o.Now().UTC()})
	if len(rows) == 0 {
		return
	}
	if err := d.o.Store.Apply(ctx, store.Change{Outbox: rows}); err != nil {
		d.log.Warn("could not queue a notification", "event", event, "err", err)
	}
}

func dayKey(t time.Time) string { return t.UTC().Format("2006-01-02T15:04") }
