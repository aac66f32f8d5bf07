package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

const cardCols = `id, identifier, title, body, state, state_reason, priority, labels, agent, spec,
 blocked_by, block_reason, gave_up, next_attempt_at, retry_epoch, claim_owner, claim_epoch,
 claim_lease_until, created_at, updated_at, version, external, pull_request`

type scanner interface{ Scan(...any) error }

func scanCard(s scanner) (board.Card, error) {
	var c board.Card
	var labels, spec, blockedBy string
	var blockReason, gaveUp, claimOwner, external, pull sql.NullString
	var next, lease sql.NullInt64
	var created, updated, claimEpoch int64
	err := s.Scan(&c.ID, &c.Identifier, &c.Title, &c.Body, &c.State, &c.StateReason, &c.Priority,
		&labels, &c.Agent, &spec, &blockedBy, &blockReason, &gaveUp, &next, &c.RetryEpoch,
		&claimOwner, &claimEpoch, &lease, &created, &updated, &c.Version, &external, &pull)
	if err != nil {
		return c, err
	}
	if c.Spec, err = rawJSON("cards", "spec", c.ID, spec); err != nil {
		return c, err
	}
	if err := decodeJSON("cards", "labels", c.ID, labels, &c.Labels); err != nil {
		return c, err
	}
	if err := decodeJSON("cards", "blocked_by", c.ID, blockedBy, &c.BlockedBy); err != nil {
		return c, err
	}
	if c.Labels == nil {
		c.Labels = []string{}
	}
	if c.BlockedBy == nil {
		c.BlockedBy = []string{}
	}
	if blockReason.Valid {
		c.BlockReason = new(board.BlockReason)
		if err := decodeJSON("cards", "block_reason", c.ID, blockReason.String, c.BlockReason); err != nil {
			return c, err
		}
	}
	if gaveUp.Valid {
		c.GaveUp = new(board.GaveUp)
		if err := decodeJSON("cards", "gave_up", c.ID, gaveUp.String, c.GaveUp); err != nil {
			return c, err
		}
	}
	if external.Valid {
		c.External = new(board.External)
		if err := decodeJSON("cards", "external", c.ID, external.String, c.External); err != nil {
			return c, err
		}
	}
	if pull.Valid {
		c.PullRequest = new(board.PullRequest)
		if err := decodeJSON("cards", "pull_request", c.ID, pull.String, c.PullRequest); err != nil {
			return c, err
		}
	}
	c.NextAttemptAt = fromNullMs(next)
	if claimOwner.Valid {
		c.Claim = &board.Claim{Owner: claimOwner.String, Epoch: claimEpoch}
		if lease.Valid {
			c.Claim.LeaseUntil = fromMs(lease.Int64)
		}
	}
	c.CreatedAt, c.UpdatedAt = fromMs(created), fromMs(updated)
	return c, nil
}

// prioOrder sorts "no priority" (0) after 4.
func prioOrder(p int) int {
	if p <= 0 {
		return 5
	}
	return p
}

// cardArgs are the values for every column but id, identifier, created_at,
// version and external (updated_at, then pull_request, last).
func cardArgs(c *board.Card) []any {
	spec := string(c.Spec)
	if spec == "" {
		spec = "{}"
	}
	var owner any
	var epoch int64
	var lease any
	if c.Claim != nil {
		owner, epoch, lease = c.Claim.Owner, c.Claim.Epoch, ms(c.Claim.LeaseUntil)
	}
	return textArgs([]any{c.Title, c.Body, c.State, c.StateReason, c.Priority, prioOrder(c.Priority),
		strList(c.Labels), c.Agent, spec, strList(c.BlockedBy),
		jsonOrNull(c.BlockReason, c.BlockReason == nil), jsonOrNull(c.GaveUp, c.GaveUp == nil),
		msPtr(c.NextAttemptAt), c.RetryEpoch, owner, epoch, lease, ms(c.UpdatedAt),
		jsonOrNull(c.PullRequest, c.PullRequest == nil)})
}

// CreateCard implements store.Store.
func (d *DB) CreateCard(ctx context.Context, prefix string, c board.Card, actor string) (board.Card, error) {
	now := d.now()
	c.ID = board.NewID()
	c.CreatedAt, c.UpdatedAt = now, now
	if c.RetryEpoch == 0 {
		c.RetryEpoch = 1
	}
	c.Version = 1
	err := d.tx(ctx, func(tx *sql.Tx) error {
		var n int64
		err := tx.QueryRowContext(ctx, d.q(`INSERT INTO counters (name, value) VALUES (?, 1)
			ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value`), "card:"+prefix).Scan(&n)
		if err != nil {
			return err
		}
		c.Identifier = fmt.Sprintf("%s-%d", prefix, n)
		args := append([]any{c.ID, c.Identifier}, cardArgs(&c)...)
		args = append(args, ms(c.CreatedAt), c.Version, c.External.ExternalKey(), jsonOrNull(c.External, c.External == nil))
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO cards (id, identifier, title, body, state, state_reason,
			priority, prio_order, labels, agent, spec, blocked_by, block_reason, gave_up, next_attempt_at,
			retry_epoch, claim_owner, claim_epoch, claim_lease_until, updated_at, pull_request, created_at, version, external_key, external)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`), args...); err != nil {
			if c.External != nil && isUnique(err) {
				return fmt.Errorf("%w (a card already mirrors %s)", store.ErrConflict, c.External.ExternalKey())
			}
			return err
		}
		return d.insertEvents(ctx, tx, []board.Event{{At: now, CardID: c.ID, Type: board.EvCreated, Actor: actor,
			Reason: "created in " + c.State, Data: mustJSON(map[string]any{"identifier": c.Identifier, "state": c.State})}})
	})
	if err != nil {
		return board.Card{}, err
	}
	if c.Labels == nil {
		c.Labels = []string{}
	}
	if c.BlockedBy == nil {
		c.BlockedBy = []string{}
	}
	return c, nil
}

// GetCard implements store.Store.
func (d *DB) GetCard(ctx context.Context, ref string) (board.Card, error) {
	c, err := scanCard(d.db.QueryRowContext(ctx, d.q(`SELECT `+cardCols+` FROM cards WHERE id = ? OR identifier = ?`), ref, strings.ToUpper(ref)))
	if err != nil {
		return c, d.wrap(err)
	}
	return c, nil
}

// ListCards implements store.Store.
func (d *DB) ListCards(ctx context.Context, f store.CardFilter) ([]board.Card, error) {
	q, args, err := d.listCardsSQL(f, false)
	if err != nil {
		return nil, err
	}
	return d.queryCards(ctx, d.db, q, args)
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func (d *DB) queryCards(ctx context.Context, db querier, q string, args []any) ([]board.Card, error) {
	return queryAll(ctx, d, db, q, args, scanCard)
}

// queryAll runs q and scans every row with scan; connection failures come
// back as store.ErrUnavailable.
func queryAll[T any](ctx context.Context, d *DB, db querier, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, d.wrap(err)
		}
		out = append(out, v)
	}
	return out, d.wrap(rows.Err())
}

// listCardsSQL is the query ListCards issues for f, with its arguments.
// noIndex forbids SQLite the indexes of cards (NOT INDEXED); PostgreSQL's
// equivalent is set per transaction by ListCardsUnindexed.
func (d *DB) listCardsSQL(f store.CardFilter, noIndex bool) (string, []any, error) {
	var where []string
	var args []any
	if len(f.IDs) > 0 {
		where = append(where, "id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.IDs)), ",")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if len(f.States) > 0 {
		where = append(where, "state IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.States)), ",")+")")
		for _, s := range f.States {
			args = append(args, s)
		}
	}
	if f.Label != "" {
		if d.dialect == postgres {
			where = append(where, "jsonb_exists(labels::jsonb, ?)")
		} else {
			where = append(where, "EXISTS (SELECT 1 FROM json_each(cards.labels) WHERE value = ?)")
		}
		args = append(args, f.Label)
	}
	if f.External != "" {
		where = append(where, "external_key = ?")
		args = append(args, f.External)
	}
	if f.Tracked {
		where = append(where, "external_key <> ''")
	}
	if f.TrackerKey != "" {
		key := "json_extract(external, '$.key')"
		if d.dialect == postgres {
			key = "(external::jsonb ->> 'key')"
		}
		where = append(where, "external_key <> '' AND lower("+key+") = lower(?)")
		args = append(args, f.TrackerKey)
	}
	if f.Agent != "" {
		where = append(where, "agent = ?")
		args = append(args, f.Agent)
	}
	if f.Claimed != nil {
		if *f.Claimed {
			where = append(where, "claim_owner IS NOT NULL")
		} else {
			where = append(where, "claim_owner IS NULL")
		}
	}
	if f.LeaseExpiredBefore != nil {
		where = append(where, "claim_owner IS NOT NULL AND claim_lease_until < ?")
		args = append(args, ms(*f.LeaseExpiredBefore))
	}
	if f.DueBy != nil {
		where = append(where, "(next_attempt_at IS NULL OR next_attempt_at <= ?)")
		args = append(args, ms(*f.DueBy))
	}
	if f.ScheduledAfter != nil {
		where = append(where, "next_attempt_at > ?")
		args = append(args, ms(*f.ScheduledAfter))
	}
	if f.Query != "" {
		where = append(where, "(LOWER(title) LIKE ? OR identifier = ?)")
		args = append(args, "%"+strings.ToLower(f.Query)+"%", strings.ToUpper(f.Query))
	}
	sqlText := `SELECT ` + cardCols + ` FROM cards`
	if noIndex && d.dialect == sqlite {
		sqlText += " NOT INDEXED"
	}
	if len(where) > 0 {
		sqlText += " WHERE " + strings.Join(where, " AND ")
	}
	switch f.Order {
	case store.OrderBoard:
		sqlText += " ORDER BY prio_order, created_at, id"
	case store.OrderUpdated:
		sqlText += " ORDER BY updated_at DESC, id DESC"
	case store.OrderNextAttempt:
		// NULLS LAST: SQLite sorts NULL first by default, PostgreSQL last.
		sqlText += " ORDER BY next_attempt_at NULLS LAST, id"
	default:
		return "", nil, fmt.Errorf("store: unknown card order %q", f.Order)
	}
	if f.Limit > 0 {
		sqlText += fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, f.Offset)
	}
	return d.q(sqlText), args, nil
}

// ListCardsUnindexed is ListCards with the indexes on cards forbidden
// (SQLite NOT INDEXED; PostgreSQL index and bitmap scans switched off for one
// read-only transaction). `drover bench` lists with it side by side with
// ListCards to show what the indexes are worth.
func (d *DB) ListCardsUnindexed(ctx context.Context, f store.CardFilter) ([]board.Card, error) {
	q, args, err := d.listCardsSQL(f, true)
	if err != nil {
		return nil, err
	}
	if d.dialect == sqlite {
		return d.queryCards(ctx, d.db, q, args)
	}
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, d.wrap(err)
	}
	defer tx.Rollback()
	for _, set := range []string{"enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan"} {
		if _, err := tx.ExecContext(ctx, "SET LOCAL "+set+" = off"); err != nil {
			return nil, d.wrap(err)
		}
	}
	return d.queryCards(ctx, tx, q, args)
}

// CountByState implements store.Store.
func (d *DB) CountByState(ctx context.Context) (map[string]int, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM cards GROUP BY state`)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, d.wrap(err)
		}
		out[s] = n
	}
	return out, d.wrap(rows.Err())
}
