package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/drover-dev/drover/internal/store"
)

// TouchNode implements store.Store.
func (d *DB) TouchNode(ctx context.Context, n store.Node) error {
	status := string(n.Status)
	if status == "" {
		status = "{}"
	}
	var lease int64
	if !n.LeaseUntil.IsZero() {
		lease = ms(n.LeaseUntil)
	}
	res, err := d.db.ExecContext(ctx, d.q(`INSERT INTO nodes (name, pid, started_at, seen_at, running, last_tick, status, instance, lease_until)
		VALUES (?,?,?,?,?,?,?,?,?)
		ON CONFLICT (name) DO UPDATE SET pid=excluded.pid, started_at=excluded.started_at, seen_at=excluded.seen_at,
		running=excluded.running, last_tick=excluded.last_tick, status=excluded.status,
		instance=excluded.instance, lease_until=excluded.lease_until
		WHERE nodes.instance = excluded.instance OR nodes.lease_until < ? OR (nodes.instance = ? AND ? <> '')`),
		n.Name, n.PID, ms(n.StartedAt), ms(n.SeenAt), n.Running, msPtr(n.LastTick), status, n.Instance, lease,
		ms(d.now()), n.Supersedes, n.Supersedes)
	if err != nil {
		return d.wrap(err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		return fmt.Errorf("%w: %s", store.ErrNodeHeld, n.Name)
	}
	return nil
}

// ListNodes implements store.Store.
func (d *DB) ListNodes(ctx context.Context) ([]store.Node, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name, pid, started_at, seen_at, running, last_tick, status, instance, lease_until FROM nodes ORDER BY name`)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []store.Node{}
	for rows.Next() {
		var n store.Node
		var st, seen, lease int64
		var tick sql.NullInt64
		var status string
		if err := rows.Scan(&n.Name, &n.PID, &st, &seen, &n.Running, &tick, &status, &n.Instance, &lease); err != nil {
			return nil, d.wrap(err)
		}
		n.StartedAt, n.SeenAt, n.LastTick = fromMs(st), fromMs(seen), fromNullMs(tick)
		if lease != 0 {
			n.LeaseUntil = fromMs(lease)
		}
		if n.Status, err = rawJSON("nodes", "status", n.Name, status); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, d.wrap(rows.Err())
}
