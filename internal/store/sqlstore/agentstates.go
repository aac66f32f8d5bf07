package sqlstore

import (
	"context"
	"database/sql"

	"github.com/drover-dev/drover/internal/store"
)

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
		if a.Data, err = rawJSON("agent_states", "data", a.Name, data.String); err != nil {
			return nil, err
		}
		a.UpdatedAt = fromMs(updated)
		out = append(out, a)
	}
	return out, d.wrap(rows.Err())
}
