package sqlstore

import (
	"context"
	"time"
)

// TryLead implements store.Store: a lease row with compare-and-set, the same
// on both backends. The holder renews it; anyone takes it once it lapsed.
func (d *DB) TryLead(ctx context.Context, node string, ttl time.Duration) (bool, error) {
	now := d.now()
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
