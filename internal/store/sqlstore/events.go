package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

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
		if e.Data, err = rawJSON("events", "data", strconv.FormatInt(e.Seq, 10), data.String); err != nil {
			return nil, err
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

// insertEvents inserts es in tx. Followers page the log by seq (since=N), so
// an event must never become visible after one with a higher seq. SQLite
// has one writer at a time, so seq order is commit order. On PostgreSQL
// seq comes from an identity column and transactions may commit in any
// order, so the insert first takes an EXCLUSIVE lock on the events table:
// it excludes other event writers (not readers) until this transaction
// ends, and callers insert events last, just before the commit, to keep
// that window short. docs/design.md ("The event log") explains the choice.
func (d *DB) insertEvents(ctx context.Context, tx *sql.Tx, es []board.Event) error {
	if len(es) == 0 {
		return nil
	}
	if d.dialect == postgres {
		if _, err := tx.ExecContext(ctx, `LOCK TABLE events IN EXCLUSIVE MODE`); err != nil {
			return err
		}
	}
	// One statement per eventChunk events, in es's order (seq follows the
	// order of the rows), so the lock above is held for a round trip or
	// two, not one per event.
	const cols = 7
	for len(es) > 0 {
		part := es[:min(len(es), eventChunk)]
		es = es[len(part):]
		args := make([]any, 0, cols*len(part))
		for _, e := range part {
			args = append(args, textArgs([]any{ms(e.At), e.CardID, e.RunID, e.Type, e.Actor, e.Reason, nullText(e.Data)})...)
		}
		rows := strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?),", len(part)), ",")
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO events (at, card_id, run_id, type, actor, reason, data) VALUES `+rows), args...); err != nil {
			return err
		}
	}
	return nil
}

// eventChunk is the most events one INSERT writes: 7 parameters each stay
// far below both backends' limits.
const eventChunk = 500
