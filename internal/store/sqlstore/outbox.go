package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

const outboxCols = `id, key, channel, event, card_id, run_id, payload, created_at, attempts, next_at, delivered_at, last_error, dead`

func scanOutbox(s scanner) (store.OutboxItem, error) {
	var o store.OutboxItem
	var payload string
	var created, next int64
	var delivered sql.NullInt64
	var dead int
	err := s.Scan(&o.ID, &o.Key, &o.Channel, &o.Event, &o.CardID, &o.RunID, &payload, &created, &o.Attempts, &next,
		&delivered, &o.LastError, &dead)
	if err != nil {
		return o, err
	}
	o.CreatedAt, o.NextAt = fromMs(created), fromMs(next)
	o.DeliveredAt = fromNullMs(delivered)
	o.Dead = dead != 0
	o.Payload, err = rawJSON("outbox", "payload", o.ID, payload)
	return o, err
}

func (d *DB) insertOutbox(ctx context.Context, tx *sql.Tx, o store.OutboxItem, now time.Time) error {
	if o.ID == "" {
		o.ID = board.NewID()
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = now
	}
	if o.NextAt.IsZero() {
		o.NextAt = now
	}
	_, err := tx.ExecContext(ctx, d.q(`INSERT INTO outbox (id, key, channel, event, card_id, run_id, payload, created_at, next_at)
		VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (key) DO NOTHING`),
		textArgs([]any{o.ID, o.Key, o.Channel, o.Event, o.CardID, o.RunID, string(o.Payload), ms(o.CreatedAt), ms(o.NextAt)})...)
	return err
}

func (d *DB) queryOutbox(ctx context.Context, q string, args ...any) ([]store.OutboxItem, error) {
	return queryAll(ctx, d, d.db, d.q(q), args, scanOutbox)
}

// DueOutbox implements store.Store.
func (d *DB) DueOutbox(ctx context.Context, now time.Time, limit int) ([]store.OutboxItem, error) {
	return d.queryOutbox(ctx, `SELECT `+outboxCols+` FROM outbox WHERE delivered_at IS NULL AND dead = 0 AND next_at <= ?
		ORDER BY next_at, id LIMIT ?`, ms(now), limit)
}

// ListOutbox implements store.Store.
func (d *DB) ListOutbox(ctx context.Context, f store.OutboxFilter) ([]store.OutboxItem, error) {
	q := `SELECT ` + outboxCols + ` FROM outbox WHERE 1=1`
	var args []any
	if f.CardID != "" {
		q += ` AND card_id = ?`
		args = append(args, f.CardID)
	}
	if f.Pending != nil {
		if *f.Pending {
			q += ` AND delivered_at IS NULL AND dead = 0`
		} else {
			q += ` AND (delivered_at IS NOT NULL OR dead = 1)`
		}
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return d.queryOutbox(ctx, q, args...)
}

// MarkOutbox implements store.Store.
func (d *DB) MarkOutbox(ctx context.Context, id string, r store.OutboxResult) error {
	var delivered any
	if r.Delivered {
		delivered = ms(r.At)
	}
	dead := 0
	if r.Dead {
		dead = 1
	}
	next := r.NextAt
	if next.IsZero() {
		next = r.At
	}
	tried := 1
	if r.Waiting {
		tried = 0
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, d.q(`UPDATE outbox SET attempts = attempts + ?, delivered_at = ?, last_error = ?,
			next_at = ?, dead = ? WHERE id = ? AND delivered_at IS NULL`), tried, delivered, r.Error, ms(next), dead, id)
		return err
	})
}
