package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Blocks before any claim: a card whose input does not fit its profile, or
// that spent its limit, is blocked once (one block event, its reason as a
// comment, one notification), with no run and no release.

// blockInvalid blocks a card for invalid input.
func (r *router) blockInvalid(ctx context.Context, c board.Card, where, what, how string) {
	cfg := r.config()
	reason := &board.BlockReason{Kind: string(policy.KindInvalidInput), What: what, Where: where, How: how}
	next := c
	next.State, next.StateReason, next.BlockReason, next.NextAttemptAt = invalidColumn(cfg), "invalid input: "+excerpt.Clip(what, 300), reason, nil
	data := jsonOf(map[string]any{"kind": policy.KindInvalidInput, "where": where})
	key := c.ID + "/validation/" + fmt.Sprint(c.Version) + "/blocked"
	if r.block(ctx, cfg, next, reason, data, key) {
		r.log.Warn("blocked: invalid input", "card_id", c.ID, "identifier", c.Identifier, "where", where)
	}
}

// blockSpent blocks a card whose current retry epoch spent its limit.
func (r *router) blockSpent(ctx context.Context, cfg *config.Config, c board.Card, spent float64) {
	dec := policy.SpendBlock(c, policy.SpendLimits{PerDay: cfg.Limits.MaxCostPerDayUSD, PerCard: cfg.Limits.MaxCostPerCardUSD}, spent, "", blockedColumn(cfg))
	next := c
	next.State, next.StateReason, next.BlockReason, next.NextAttemptAt = dec.NextState, dec.Explain, dec.BlockReason, nil
	r.block(ctx, cfg, next, dec.BlockReason, nil, fmt.Sprintf("%s/spend/%d/blocked", c.ID, c.RetryEpoch))
}

// block writes next (the card in its blocked column) with its event,
// comment and notification; false when the write failed (a conflict means
// the card changed meanwhile: the next tick sees it as it is).
func (r *router) block(ctx context.Context, cfg *config.Config, next board.Card, reason *board.BlockReason, data []byte, key string) bool {
	now := r.now().UTC()
	ch := store.Change{Card: &next,
		Events:   []board.Event{{At: now, CardID: next.ID, Type: board.EvBlocked, Actor: actorOf(r.node), Reason: next.StateReason, Data: data}},
		Comments: []board.Comment{{CardID: next.ID, Author: actorOf(r.node), Body: reasonText(reason), At: now}},
		Outbox:   r.rows(cfg, Notice{Event: policy.NotifyBlocked, Key: key, Card: next, Reason: reason, At: now}),
	}
	if err := r.st.Apply(ctx, ch); err != nil && !errors.Is(err, store.ErrConflict) {
		r.log.Error("could not block a card", "card_id", next.ID, "identifier", next.Identifier, "kind", reason.Kind, "err", err)
		return false
	}
	return true
}

// invalidColumn is where invalid input goes: policy.failed_state when it is
// a blocked column, else the board's first blocked column.
func invalidColumn(cfg *config.Config) string {
	col := cfg.Policy.FailedState
	if cfg.Board.RoleOf(col) != board.RoleBlocked {
		if b, ok := cfg.Board.First(board.RoleBlocked); ok {
			col = b.Name
		}
	}
	return col
}

// notice queues a notification that is not about a run (spend cap, config
// error); the key makes it once per day or per broken config.
func (r *router) notice(ctx context.Context, cfg *config.Config, event, key, text string) {
	rows := r.rows(cfg, Notice{Event: event, Key: key, Text: text, At: r.now().UTC()})
	if len(rows) == 0 {
		return
	}
	if err := r.st.Apply(ctx, store.Change{Outbox: rows}); err != nil {
		r.log.Warn("could not queue a notification", "event", event, "err", err)
	}
}
