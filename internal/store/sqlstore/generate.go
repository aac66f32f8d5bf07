package sqlstore

import (
	"context"
	"fmt"
	"time"
)

// MaxGeneratedCards is how many cards GenerateEvents spreads events over at
// most (SQLite's limit on the terms of a compound SELECT is 500).
const MaxGeneratedCards = 400

// GenerateEvents appends n synthetic events ("bench" type, actor "bench"),
// spread evenly in time from from to to and over cardIDs (round-robin; none
// = board-wide events), with INSERT … SELECT statements of at most a million
// rows each, so a store with millions of events is built in seconds. It is
// for benchmarks and load tests (`drover bench history`), never for a board.
// On PostgreSQL it ends with ANALYZE, as autovacuum would after such a load.
func (d *DB) GenerateEvents(ctx context.Context, n int, from, to time.Time, cardIDs []string) error {
	if len(cardIDs) == 0 {
		cardIDs = []string{""}
	}
	if len(cardIDs) > MaxGeneratedCards {
		return fmt.Errorf("GenerateEvents spreads events over at most %d cards, not %d", MaxGeneratedCards, len(cardIDs))
	}
	// A card id per row without a join: the ids sit in a VALUES list.
	step := float64(to.Sub(from).Milliseconds()) / float64(max(n, 1))
	const chunk = 1_000_000
	for done := 0; done < n; done += chunk {
		m := min(chunk, n-done)
		var series string
		if d.dialect == postgres {
			series = `SELECT g AS x FROM generate_series(0, CAST(? AS INTEGER) - 1) g`
		} else {
			series = `WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x + 1 < CAST(? AS INTEGER)) SELECT x FROM c`
		}
		ids := `SELECT 0 AS i, CAST(? AS TEXT) AS id`
		args := []any{m, cardIDs[0]}
		for i, id := range cardIDs[1:] {
			ids += ` UNION ALL SELECT CAST(? AS INTEGER), CAST(? AS TEXT)`
			args = append(args, i+1, id)
		}
		q := `INSERT INTO events (at, card_id, run_id, type, actor, reason)
 SELECT CAST(CAST(? AS BIGINT) + (s.x + CAST(? AS BIGINT)) * CAST(? AS DOUBLE PRECISION) AS BIGINT), ids.id, '', 'bench', 'bench', ''
 FROM (` + series + `) s JOIN (` + ids + `) ids ON ids.i = s.x % CAST(? AS INTEGER) ORDER BY s.x`
		all := append([]any{from.UnixMilli(), done, step}, args...)
		all = append(all, len(cardIDs))
		if _, err := d.db.ExecContext(ctx, d.q(q), all...); err != nil {
			return d.wrap(err)
		}
	}
	if d.dialect == postgres {
		// What autovacuum does after a load like this one, at once (this
		// schema's tables only, by search_path): the planner then sees the
		// tables as a long-lived board's are.
		if _, err := d.db.ExecContext(ctx, `ANALYZE events, runs, cards, outbox`); err != nil {
			return d.wrap(err)
		}
	}
	return nil
}
