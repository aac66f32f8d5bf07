package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// FloorOptions says what Floor burns down.
type FloorOptions struct {
	Cards int
	// Batch is how many cards are in flight at once, split between the
	// workers (River's benchmark keeps 2,000 jobs in flight).
	Batch int
	// Workers claim and route concurrently, each its own share of Batch
	// (0: one on SQLite, which has one writer; GOMAXPROCS on PostgreSQL).
	Workers int
}

// FloorStats is one Floor run.
type FloorStats struct {
	Cards   int           `json:"cards"`
	Batch   int           `json:"batch"`
	Workers int           `json:"workers"`
	Wall    time.Duration `json:"-"`
}

// Floor measures one lean way of writing the records drover keeps for
// every card: per batch, one transaction claims and starts the batch (each
// card's state, claim owner, claim epoch and lease; a run row with its
// start, log path and workspace; a claimed and a started event) and one
// routes it (the card's state, the run's outcome, a finished event), as
// set-based statements on drover's own tables and indexes. Nothing else: no
// agent, workspace, log, budget, notification, progress, change notice or
// event-order lock, and fewer transactions than drover's claim, start and
// routing commits. It is a measured reference, not a proven minimum (one
// transaction for all three, or more connections, may do better), but what
// it writes is what any dispatcher keeping those records writes: its rate is
// what drover could reach if nothing but those rows cost anything (bench
// compare sets it beside River).
//
// It refuses a store that has cards: it is for a scratch store only.
func (d *DB) Floor(ctx context.Context, o FloorOptions) (FloorStats, error) {
	if o.Workers <= 0 {
		o.Workers = 1
		if d.dialect == postgres {
			o.Workers = max(1, min(runtime.GOMAXPROCS(0), o.Batch))
		}
	}
	st := FloorStats{Cards: o.Cards, Batch: o.Batch, Workers: o.Workers}
	if o.Cards <= 0 || o.Batch < o.Workers {
		return st, fmt.Errorf("store: floor needs cards above 0 and a batch of at least one card per worker (got %d cards, batch %d, %d workers)", o.Cards, o.Batch, o.Workers)
	}
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM cards`).Scan(&n); err != nil {
		return st, d.wrap(err)
	}
	if n > 0 {
		return st, fmt.Errorf("store: floor runs on an empty scratch store only; this one has %d cards", n)
	}
	seed := `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM g WHERE n < ?)
INSERT INTO cards (id, identifier, title, state, created_at, updated_at)
SELECT printf('%026d', n), 'FLOOR-' || n, 'floor', 'ready', n, n FROM g`
	if d.dialect == postgres {
		seed = `INSERT INTO cards (id, identifier, title, state, created_at, updated_at)
SELECT lpad(n::text, 26, '0'), 'FLOOR-' || n, 'floor', 'ready', n, n FROM generate_series(1, $1::bigint) n`
	}
	if _, err := d.db.ExecContext(ctx, seed, o.Cards); err != nil {
		return st, d.wrap(err)
	}
	if d.dialect == postgres {
		if _, err := d.db.ExecContext(ctx, `ANALYZE cards`); err != nil {
			return st, d.wrap(err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, o.Workers)
	for w := range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprint("floor-", w+1)
			share := o.Batch / o.Workers
			for {
				got, err := d.floorBatch(ctx, owner, share)
				if err != nil || got == 0 {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	st.Wall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	var done, runs, events int
	if err := d.db.QueryRowContext(ctx, `SELECT
 (SELECT count(*) FROM cards WHERE state = 'done'),
 (SELECT count(*) FROM runs WHERE outcome = 'succeeded' AND started_at IS NOT NULL),
 (SELECT count(*) FROM events WHERE type IN ('claimed', 'started', 'finished'))`).Scan(&done, &runs, &events); err != nil {
		return st, d.wrap(err)
	}
	if done != o.Cards || runs != o.Cards || events != 3*o.Cards {
		return st, fmt.Errorf("store: floor left %d of %d cards done, %d started runs succeeded, %d claim, start and routing events (want %d)", done, o.Cards, runs, events, 3*o.Cards)
	}
	return st, nil
}

// floorBatch claims and starts up to limit ready cards for owner in one
// transaction and routes them in a second, and returns how many it claimed.
func (d *DB) floorBatch(ctx context.Context, owner string, limit int) (int, error) {
	now := time.Now().UnixMilli()
	lease := now + time.Minute.Milliseconds()
	var claimed int64
	err := d.floorTx(ctx, func(t *sql.Tx) error {
		if d.dialect == postgres {
			r, err := t.ExecContext(ctx, `WITH picked AS (
  SELECT id FROM cards WHERE state = 'ready' ORDER BY state, prio_order, created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED),
c AS (UPDATE cards SET state = 'running', claim_owner = $2, claim_epoch = claim_epoch + 1, claim_lease_until = $4,
  updated_at = $3, version = version + 1 FROM picked WHERE cards.id = picked.id RETURNING cards.id, cards.retry_epoch, cards.claim_epoch),
r AS (INSERT INTO runs (id, card_id, attempt, retry_epoch, claim_epoch, node, claimed_at, started_at, log_path, workspace)
  SELECT 'r' || id, id, 1, retry_epoch, claim_epoch, $2, $3, $3, '/floor/logs/' || id || '.log', '/floor/workspaces/' || id FROM c
  RETURNING id, card_id)
INSERT INTO events (at, card_id, run_id, type, actor) SELECT $3, card_id, id, t.type, $2 FROM r, (VALUES (1, 'claimed'), (2, 'started')) AS t(n, type)
ORDER BY card_id, t.n`, limit, owner, now, lease)
			if err == nil {
				claimed, err = r.RowsAffected()
				claimed /= 2 // a claimed and a started event per card
			}
			return err
		}
		r, err := t.ExecContext(ctx, `UPDATE cards SET state = 'running', claim_owner = ?, claim_epoch = claim_epoch + 1,
  claim_lease_until = ?, updated_at = ?, version = version + 1
WHERE id IN (SELECT id FROM cards WHERE state = 'ready' ORDER BY state, prio_order, created_at, id LIMIT ?)`, owner, lease, now, limit)
		if err != nil {
			return err
		}
		if claimed, err = r.RowsAffected(); err != nil || claimed == 0 {
			return err
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO runs (id, card_id, attempt, retry_epoch, claim_epoch, node, claimed_at, started_at, log_path, workspace)
SELECT 'r' || id, id, 1, retry_epoch, claim_epoch, ?, ?, ?, '/floor/logs/' || id || '.log', '/floor/workspaces/' || id
FROM cards WHERE state = 'running' AND claim_owner = ?`, owner, now, now, owner); err != nil {
			return err
		}
		_, err = t.ExecContext(ctx, `INSERT INTO events (at, card_id, run_id, type, actor)
SELECT ?, id, 'r' || id, t.type, ? FROM cards, (SELECT 1 AS n, 'claimed' AS type UNION ALL SELECT 2, 'started') AS t
WHERE state = 'running' AND claim_owner = ? ORDER BY id, t.n`, now, owner, owner)
		return err
	})
	if err != nil || claimed == 0 {
		return 0, err
	}
	err = d.floorTx(ctx, func(t *sql.Tx) error {
		if d.dialect == postgres {
			_, err := t.ExecContext(ctx, `WITH c AS (
  UPDATE cards SET state = 'done', claim_owner = NULL, claim_lease_until = NULL, updated_at = $1, version = version + 1
  WHERE state = 'running' AND claim_owner = $2 RETURNING id),
r AS (UPDATE runs SET outcome = 'succeeded', finished_at = $1 FROM c WHERE runs.card_id = c.id AND runs.outcome = '' RETURNING runs.id, runs.card_id)
INSERT INTO events (at, card_id, run_id, type, actor) SELECT $1, card_id, id, 'finished', $2 FROM r`, now, owner)
			return err
		}
		if _, err := t.ExecContext(ctx, `UPDATE runs SET outcome = 'succeeded', finished_at = ?
WHERE outcome = '' AND card_id IN (SELECT id FROM cards WHERE state = 'running' AND claim_owner = ?)`, now, owner); err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO events (at, card_id, run_id, type, actor)
SELECT ?, id, 'r' || id, 'finished', ? FROM cards WHERE state = 'running' AND claim_owner = ?`, now, owner, owner); err != nil {
			return err
		}
		_, err := t.ExecContext(ctx, `UPDATE cards SET state = 'done', claim_owner = NULL, claim_lease_until = NULL,
  updated_at = ?, version = version + 1 WHERE state = 'running' AND claim_owner = ?`, now, owner)
		return err
	})
	return int(claimed), err
}

// floorTx runs fn in a plain transaction: none of tx's change notice,
// test hooks or publishing.
func (d *DB) floorTx(ctx context.Context, fn func(*sql.Tx) error) error {
	t, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(err)
	}
	if err := fn(t); err != nil {
		_ = t.Rollback()
		return d.wrap(err)
	}
	return d.wrap(t.Commit())
}
