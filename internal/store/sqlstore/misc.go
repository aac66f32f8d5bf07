package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// ListEvents implements store.Store.
func (d *DB) ListEvents(ctx context.Context, f store.EventFilter) ([]board.Event, error) {
	q := `SELECT seq, at, card_id, run_id, type, actor, reason, data FROM events WHERE seq > ?`
	args := []any{f.SinceSeq}
	if f.CardID != "" {
		q += ` AND card_id = ?`
		args = append(args, f.CardID)
	}
	if f.Since != nil {
		q += ` AND at >= ?`
		args = append(args, ms(*f.Since))
	}
	if f.Newest {
		q += ` ORDER BY seq DESC`
	} else {
		q += ` ORDER BY seq`
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := d.db.QueryContext(ctx, d.q(q), args...)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []board.Event{}
	for rows.Next() {
		var e board.Event
		var at int64
		var data sql.NullString
		if err := rows.Scan(&e.Seq, &at, &e.CardID, &e.RunID, &e.Type, &e.Actor, &e.Reason, &data); err != nil {
			return nil, d.wrap(err)
		}
		e.At = fromMs(at)
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		out = append(out, e)
	}
	if f.Newest {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, d.wrap(rows.Err())
}

// ListComments implements store.Store.
func (d *DB) ListComments(ctx context.Context, cardID string) ([]board.Comment, error) {
	rows, err := d.db.QueryContext(ctx, d.q(`SELECT id, card_id, author, body, at FROM comments WHERE card_id = ? ORDER BY at, id`), cardID)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []board.Comment{}
	for rows.Next() {
		var c board.Comment
		var at int64
		if err := rows.Scan(&c.ID, &c.CardID, &c.Author, &c.Body, &at); err != nil {
			return nil, d.wrap(err)
		}
		c.At = fromMs(at)
		out = append(out, c)
	}
	return out, d.wrap(rows.Err())
}

const outboxCols = `id, key, channel, event, card_id, run_id, payload, created_at, attempts, next_at, delivered_at, last_error, dead`

func scanOutbox(s scanner) (store.OutboxItem, error) {
	var o store.OutboxItem
	var payload string
	var created, next int64
	var delivered sql.NullInt64
	var dead int
	err := s.Scan(&o.ID, &o.Key, &o.Channel, &o.Event, &o.CardID, &o.RunID, &payload, &created, &o.Attempts, &next,
		&delivered, &o.LastError, &dead)
	o.Payload = json.RawMessage(payload)
	o.CreatedAt, o.NextAt = fromMs(created), fromMs(next)
	o.DeliveredAt = fromNullMs(delivered)
	o.Dead = dead != 0
	return o, err
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
	return d.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, d.q(`UPDATE outbox SET attempts = attempts + 1, delivered_at = ?, last_error = ?,
			next_at = ?, dead = ? WHERE id = ? AND delivered_at IS NULL`), delivered, r.Error, ms(next), dead, id)
		return err
	})
}

// ListAgentStates implements store.Store.
func (d *DB) ListAgentStates(ctx context.Context) ([]store.AgentState, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name, state, kind, reason, until, data, updated_at, version FROM agent_states ORDER BY name`)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []store.AgentState{}
	for rows.Next() {
		var a store.AgentState
		var until sql.NullInt64
		var data sql.NullString
		var updated int64
		if err := rows.Scan(&a.Name, &a.State, &a.Kind, &a.Reason, &until, &data, &updated, &a.Version); err != nil {
			return nil, d.wrap(err)
		}
		a.Until = fromNullMs(until)
		if data.Valid {
			a.Data = json.RawMessage(data.String)
		}
		a.UpdatedAt = fromMs(updated)
		out = append(out, a)
	}
	return out, d.wrap(rows.Err())
}

// TouchNode implements store.Store.
func (d *DB) TouchNode(ctx context.Context, n store.Node) error {
	status := string(n.Status)
	if status == "" {
		status = "{}"
	}
	_, err := d.db.ExecContext(ctx, d.q(`INSERT INTO nodes (name, pid, started_at, seen_at, running, last_tick, status) VALUES (?,?,?,?,?,?,?)
		ON CONFLICT (name) DO UPDATE SET pid=excluded.pid, started_at=excluded.started_at, seen_at=excluded.seen_at,
		running=excluded.running, last_tick=excluded.last_tick, status=excluded.status`),
		n.Name, n.PID, ms(n.StartedAt), ms(n.SeenAt), n.Running, msPtr(n.LastTick), status)
	return d.wrap(err)
}

// ListNodes implements store.Store.
func (d *DB) ListNodes(ctx context.Context) ([]store.Node, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name, pid, started_at, seen_at, running, last_tick, status FROM nodes ORDER BY name`)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []store.Node{}
	for rows.Next() {
		var n store.Node
		var st, seen int64
		var tick sql.NullInt64
		var status string
		if err := rows.Scan(&n.Name, &n.PID, &st, &seen, &n.Running, &tick, &status); err != nil {
			return nil, d.wrap(err)
		}
		n.StartedAt, n.SeenAt, n.LastTick = fromMs(st), fromMs(seen), fromNullMs(tick)
		n.Status = json.RawMessage(status)
		out = append(out, n)
	}
	return out, d.wrap(rows.Err())
}

// TryLead implements store.Store: a lease row with compare-and-set, the same
// on both backends. The holder renews it; anyone takes it once it lapsed.
func (d *DB) TryLead(ctx context.Context, node string, ttl time.Duration) (bool, error) {
	now := time.Now()
	_, err := d.db.ExecContext(ctx, d.q(`INSERT INTO leader (id, node, lease_until) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET node = excluded.node, lease_until = excluded.lease_until
		WHERE leader.node = excluded.node OR leader.lease_until < ?`), node, ms(now.Add(ttl)), ms(now))
	if err != nil {
		return false, d.wrap(err)
	}
	var holder string
	if err := d.db.QueryRowContext(ctx, `SELECT node FROM leader WHERE id = 1`).Scan(&holder); err != nil {
		return false, d.wrap(err)
	}
	return holder == node, nil
}
