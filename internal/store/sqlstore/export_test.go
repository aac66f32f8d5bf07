package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// SetRestoreHookForTest makes Restore call f at each of its steps while it
// holds the store's restore lock ("locked", "copied"); nil removes it.
func SetRestoreHookForTest(f func(step string)) { restoreHook = f }

// BulkInsertCardsForTest seeds n cards in one transaction with multi-row
// INSERTs, for benchmarks that need a large board quickly. card(i) gives
// card i's title, state, priority, labels…; ids, identifiers (prefix-1…n,
// the counter is set to n) and timestamps (one millisecond apart, oldest
// first) are assigned here. No "created" events are written: this is a
// seeding shortcut, not CreateCard.
func (d *DB) BulkInsertCardsForTest(ctx context.Context, prefix string, n int, card func(i int) board.Card) error {
	const batch = 500 // 22 columns × 500 rows stays below both backends' parameter limits
	base := d.now().Add(-time.Duration(n) * time.Millisecond).Truncate(time.Millisecond)
	return d.tx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < n; start += batch {
			end := min(start+batch, n)
			var sb strings.Builder
			sb.WriteString(`INSERT INTO cards (id, identifier, title, body, state, state_reason,
				priority, prio_order, labels, agent, spec, blocked_by, block_reason, gave_up, next_attempt_at,
				retry_epoch, claim_owner, claim_epoch, claim_lease_until, updated_at, pull_request, created_at, version) VALUES `)
			args := make([]any, 0, (end-start)*23)
			for i := start; i < end; i++ {
				c := card(i)
				c.CreatedAt = base.Add(time.Duration(i) * time.Millisecond)
				c.UpdatedAt = c.CreatedAt
				if c.RetryEpoch == 0 {
					c.RetryEpoch = 1
				}
				if i > start {
					sb.WriteString(",")
				}
				sb.WriteString("(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
				args = append(args, board.NewID(), fmt.Sprintf("%s-%d", prefix, i+1))
				args = append(args, cardArgs(&c)...)
				args = append(args, ms(c.CreatedAt), 1)
			}
			if _, err := tx.ExecContext(ctx, d.q(sb.String()), args...); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, d.q(`INSERT INTO counters (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`), "card:"+prefix, n)
		return err
	})
}

// ExecForTest runs a statement directly; tests use it to fake states that
// drover itself never writes (such as a schema from the future).
func (d *DB) ExecForTest(stmt string) error {
	_, err := d.db.Exec(stmt)
	return err
}

// ExplainListCards returns the query plan of the SQL that ListCards issues
// for f (EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL), one line per
// plan node. Tests and benchmarks use it to check that a filter is served by
// an index.
func (d *DB) ExplainListCards(ctx context.Context, f store.CardFilter) (string, error) {
	q, args, err := d.listCardsSQL(f, false)
	if err != nil {
		return "", err
	}
	prefix, col := "EXPLAIN ", 0
	if d.dialect == sqlite {
		prefix, col = "EXPLAIN QUERY PLAN ", 3 // id, parent, notused, detail
	}
	rows, err := d.db.QueryContext(ctx, prefix+q, args...)
	if err != nil {
		return "", d.wrap(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", d.wrap(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", d.wrap(err)
		}
		lines = append(lines, fmt.Sprint(vals[col]))
	}
	return strings.Join(lines, "\n"), d.wrap(rows.Err())
}

// HoldNextCommitForTest makes the next write transaction of d stop just
// before its commit: entered is closed when it gets there, and it commits
// once release is closed. Later transactions are not held.
func (d *DB) HoldNextCommitForTest(entered chan<- struct{}, release <-chan struct{}) {
	var once sync.Once
	d.beforeCommit = func() {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
}

// LoseNextCommitReplyForTest makes the next write transaction of d commit
// and then report err, as when the connection drops after the database
// committed.
func (d *DB) LoseNextCommitReplyForTest(err error) {
	var once sync.Once
	d.afterCommit = func() error {
		var out error
		once.Do(func() { out = err })
		return out
	}
}
