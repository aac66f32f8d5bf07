package sqlstore

import (
	"context"
	"database/sql"

	"github.com/drover-dev/drover/internal/store"
)

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
		if n.Status, err = rawJSON("nodes", "status", n.Name, status); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, d.wrap(rows.Err())
}
