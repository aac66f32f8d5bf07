package sqlstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The statements that must stay cheap on a store with years of history use
// an index, never a scan of the whole table (SQLite's plan; PostgreSQL's
// planner prefers sequential scans on tables this small, so it proves
// nothing there). PruneEvents scans events in primary-key order under a
// LIMIT: it reads at most its batch.
func TestHistoryQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := ms(time.Now())
	for _, tc := range []struct {
		name, sql string
		args      []any
		want      []string // each must appear in the plan
	}{
		{"old runs", oldRunsSQL(false), []any{now, 10}, []string{"runs_finished", "sqlite_autoindex_runs"}},
		{"old logs", oldRunsSQL(true), []any{now, 10}, []string{"runs_logged"}},
		{"settled notifications", pruneOutboxSQL, []any{now, 10}, []string{"outbox_settled"}},
		{"a window of comments", agentCommentsWindowSQL, []any{"", 10}, []string{"sqlite_autoindex_comments"}},
		{"a card's events", `SELECT seq FROM events WHERE seq > ? AND card_id = ? ORDER BY seq DESC LIMIT 20`, []any{0, "c"}, []string{"events_card"}},
		{"today's runs", `SELECT id FROM runs WHERE claimed_at >= ? ORDER BY claimed_at DESC, id DESC LIMIT 5000`, []any{now}, []string{"runs_claimed"}},
	} {
		plan := queryPlan(t, d, tc.sql, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: plan does not use %s:\n%s", tc.name, w, plan)
			}
		}
		for _, table := range []string{"events", "runs", "outbox", "comments"} {
			if strings.Contains(plan, "SCAN "+table+"\n") {
				t.Errorf("%s: plan scans all of %s:\n%s", tc.name, table, plan)
			}
		}
	}
}

func queryPlan(t *testing.T, d *DB, q string, args ...any) string {
	t.Helper()
	rows, err := d.db.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}
