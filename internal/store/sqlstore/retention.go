package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

var _ store.Pruner = (*DB)(nil)

// newerRun holds when a later run of the same card exists: the latest run of
// a card is never pruned. It names the outer row as runs (no alias), which
// both SELECT and DELETE below can do.
const newerRun = `EXISTS (SELECT 1 FROM runs n WHERE n.card_id = runs.card_id AND
 (n.retry_epoch > runs.retry_epoch OR (n.retry_epoch = runs.retry_epoch AND n.attempt > runs.attempt)))`

// OldRuns implements store.Pruner. The conditions repeat the partial
// indexes' (runs_finished, runs_logged) so the planner uses them.
func (d *DB) OldRuns(ctx context.Context, before time.Time, withLog bool, limit int) ([]store.OldRun, error) {
	return queryAll(ctx, d, d.db, d.q(oldRunsSQL(withLog)), []any{ms(before), limit}, func(s scanner) (store.OldRun, error) {
		var r store.OldRun
		err := s.Scan(&r.ID, &r.LogPath)
		return r, err
	})
}

func oldRunsSQL(withLog bool) string {
	q := `SELECT id, log_path FROM runs WHERE outcome <> ''`
	if withLog {
		q += ` AND log_path <> ''`
	}
	return q + ` AND finished_at < ? AND ` + newerRun + ` ORDER BY finished_at LIMIT ?`
}

// DeleteRuns implements store.Pruner.
func (d *DB) DeleteRuns(ctx context.Context, ids []string, before time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q := `DELETE FROM runs WHERE id IN (` + marks(len(ids)) + `) AND outcome <> '' AND finished_at < ? AND ` + newerRun
	return d.execCount(ctx, q, append(strArgs(ids), ms(before))...)
}

// ForgetLogs implements store.Pruner.
func (d *DB) ForgetLogs(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := d.execCount(ctx, `UPDATE runs SET log_path = '' WHERE id IN (`+marks(len(ids))+`)`, strArgs(ids)...)
	return err
}

// PruneEvents implements store.Pruner. It looks only at the limit oldest
// events (by seq, the primary key) and deletes those among them older than
// before, so a pass costs the same on a store of any size and needs no
// index on at. An event older than a newer one before it in seq order (a
// clock set back) waits until that one expires too.
func (d *DB) PruneEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	return d.execCount(ctx, pruneEventsSQL, limit, ms(before))
}

const pruneEventsSQL = `DELETE FROM events WHERE seq IN
 (SELECT seq FROM (SELECT seq, at FROM events ORDER BY seq LIMIT ?) w WHERE w.at < ?)`

// PruneOutbox implements store.Pruner (index outbox_settled).
func (d *DB) PruneOutbox(ctx context.Context, before time.Time, limit int) (int, error) {
	return d.execCount(ctx, pruneOutboxSQL, ms(before), limit)
}

const pruneOutboxSQL = `DELETE FROM outbox WHERE id IN
 (SELECT id FROM outbox WHERE (delivered_at IS NOT NULL OR dead <> 0) AND created_at < ? ORDER BY created_at LIMIT ?)`

// PruneAgentComments implements store.Pruner: one read of a window of the
// primary key, one delete of the agents' old comments in it.
func (d *DB) PruneAgentComments(ctx context.Context, before time.Time, after string, limit int) (int, string, bool, error) {
	type row struct {
		id, author string
		at         int64
	}
	rows, err := queryAll(ctx, d, d.db, d.q(agentCommentsWindowSQL), []any{after, limit}, func(s scanner) (row, error) {
		var r row
		err := s.Scan(&r.id, &r.author, &r.at)
		return r, err
	})
	if err != nil || len(rows) == 0 {
		return 0, after, true, err
	}
	var ids []string
	for _, r := range rows {
		if r.at < ms(before) && strings.HasPrefix(r.author, "agent:") {
			ids = append(ids, r.id)
		}
	}
	last := rows[len(rows)-1]
	done := len(rows) < limit || last.at >= ms(before)
	if len(ids) == 0 {
		return 0, last.id, done, nil
	}
	n, err := d.execCount(ctx, `DELETE FROM comments WHERE id IN (`+marks(len(ids))+`)`, strArgs(ids)...)
	return n, last.id, done, err
}

const agentCommentsWindowSQL = `SELECT id, author, at FROM comments WHERE id > ? ORDER BY id LIMIT ?`

// CountPrunable implements store.Pruner. Counting events scans them: it is
// for `drover gc --dry-run`, not for the leader's passes.
func (d *DB) CountPrunable(ctx context.Context, c store.Cutoffs) (store.Prunable, error) {
	var p store.Prunable
	count := func(dst *int, q string, args ...any) error {
		return d.wrap(d.db.QueryRowContext(ctx, d.q(q), args...).Scan(dst))
	}
	if !c.Events.IsZero() {
		if err := count(&p.Events, `SELECT COUNT(*) FROM events WHERE at < ?`, ms(c.Events)); err != nil {
			return p, err
		}
		if err := count(&p.Outbox, `SELECT COUNT(*) FROM outbox WHERE (delivered_at IS NOT NULL OR dead <> 0) AND created_at < ?`, ms(c.Events)); err != nil {
			return p, err
		}
		if err := count(&p.Comments, `SELECT COUNT(*) FROM comments WHERE author LIKE 'agent:%' AND at < ?`, ms(c.Events)); err != nil {
			return p, err
		}
	}
	if !c.Runs.IsZero() {
		if err := count(&p.Runs, `SELECT COUNT(*) FROM runs WHERE outcome <> '' AND finished_at < ? AND `+newerRun, ms(c.Runs)); err != nil {
			return p, err
		}
	}
	// Logs go with their runs, and on their own once older than c.Logs.
	logs, args := []string{}, []any{}
	for _, t := range []time.Time{c.Runs, c.Logs} {
		if !t.IsZero() {
			logs = append(logs, "finished_at < ?")
			args = append(args, ms(t))
		}
	}
	if len(logs) > 0 {
		q := `SELECT COUNT(*) FROM runs WHERE outcome <> '' AND log_path <> '' AND (` + strings.Join(logs, " OR ") + `) AND ` + newerRun
		if err := count(&p.Logs, q, args...); err != nil {
			return p, err
		}
	}
	return p, nil
}

// RecordGC implements store.Pruner.
func (d *DB) RecordGC(ctx context.Context, r store.GCReport) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = d.execCount(ctx, `INSERT INTO gc_reports (id, report) VALUES (1, ?)
 ON CONFLICT (id) DO UPDATE SET report = excluded.report`, string(b))
	return err
}

// LastGC implements store.Pruner.
func (d *DB) LastGC(ctx context.Context) (*store.GCReport, error) {
	var s string
	err := d.db.QueryRowContext(ctx, `SELECT report FROM gc_reports WHERE id = 1`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, d.wrap(err)
	}
	var r store.GCReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// execCount runs one statement outside a transaction (it is one statement)
// and returns the rows it affected.
func (d *DB) execCount(ctx context.Context, q string, args ...any) (int, error) {
	res, err := d.db.ExecContext(ctx, d.q(q), args...)
	if err != nil {
		return 0, d.wrap(err)
	}
	n, err := res.RowsAffected()
	return int(n), d.wrap(err)
}

// marks returns n comma-separated placeholders.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func strArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
