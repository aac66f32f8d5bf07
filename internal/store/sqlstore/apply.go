package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// tx runs fn in a transaction and notifies watchers after a commit.
func (d *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return d.txAnnounced(ctx, true, fn)
}

// txAnnounced is tx; announce false commits without notifying watchers.
func (d *DB) txAnnounced(ctx context.Context, announce bool, fn func(*sql.Tx) error) error {
	t, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(err)
	}
	// PostgreSQL sends a transaction's notifications at its commit, so the
	// notification is queued first: not between the events insert and the
	// commit, where every round trip is one more the event-order lock is
	// held for (see insertEvents).
	if d.dialect == postgres && announce {
		if _, err := t.ExecContext(ctx, `SELECT pg_notify('drover_changes', '')`); err != nil {
			_ = t.Rollback()
			return d.wrap(err)
		}
	}
	if err := fn(t); err != nil {
		_ = t.Rollback()
		return d.wrap(err)
	}
	if d.beforeCommit != nil {
		d.beforeCommit()
	}
	if err := t.Commit(); err != nil {
		return d.wrap(err)
	}
	if d.afterCommit != nil {
		if err := d.afterCommit(); err != nil {
			return d.wrap(err) // a test's lost reply: committed, reported as failed
		}
	}
	if announce {
		d.hub.publish()
	}
	return nil
}

// Apply implements store.Store.
func (d *DB) Apply(ctx context.Context, ch store.Change) error {
	now := d.now()
	return d.txAnnounced(ctx, !progressOnly(ch), func(tx *sql.Tx) error {
		if err := d.lockLiveCaps(ctx, tx, []store.Change{ch}); err != nil {
			return err
		}
		if err := d.applyIn(ctx, tx, &ch, now); err != nil {
			return err
		}
		// Events last: on PostgreSQL their insert takes the event-order lock,
		// held until the commit right after (see insertEvents).
		return d.insertEvents(ctx, tx, stampEvents(ch.Events, now))
	})
}

// ApplyAll implements store.Store: one transaction, each change inside a
// savepoint of its own. A change whose guard fails is rolled back to its
// savepoint (so nothing of it is written) and reported; the others go on.
// The events of the changes written are inserted last, in change order, so
// on PostgreSQL the event-order lock is held only for that moment before
// the commit, as in Apply.
func (d *DB) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	refused := make([]error, len(chs))
	if len(chs) == 0 {
		return refused, nil
	}
	now := d.now()
	err := d.tx(ctx, func(tx *sql.Tx) error {
		if err := d.lockLiveCaps(ctx, tx, chs); err != nil {
			return err
		}
		var events []board.Event
		for i := range chs {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT change`); err != nil {
				return err
			}
			err := d.applyIn(ctx, tx, &chs[i], now)
			if err != nil && !guardFailed(err) {
				return err
			}
			if err != nil {
				refused[i] = err
				if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT change`); rerr != nil {
					return rerr
				}
			} else {
				events = append(events, stampEvents(chs[i].Events, now)...)
			}
			if _, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT change`); err != nil {
				return err
			}
		}
		return d.insertEvents(ctx, tx, events)
	})
	if err != nil {
		return nil, err
	}
	return refused, nil
}

// guardFailed reports whether err is a Change's own refusal (a guard, a
// unique attempt, a blocker cycle), which refuses that change alone, rather
// than the database failing the statement.
func guardFailed(err error) bool {
	var cyc *store.CycleError
	var le *store.LimitError
	return errors.Is(err, store.ErrConflict) || errors.As(err, &cyc) || errors.As(err, &le)
}

func stampEvents(es []board.Event, now time.Time) []board.Event {
	for i := range es {
		if es[i].At.IsZero() {
			es[i].At = now
		}
	}
	return es
}

// applyIn writes ch's guards and rows in tx, all but its events.
func (d *DB) applyIn(ctx context.Context, tx *sql.Tx, ch *store.Change, now time.Time) error {
	if ch.ClaimGuard != nil {
		id := ""
		switch {
		case ch.Card != nil:
			id = ch.Card.ID
		case ch.Run != nil:
			id = ch.Run.CardID
		case ch.AgentCall != nil:
			id = ch.AgentCall.CardID
		}
		var n int
		q, args := `SELECT COUNT(*) FROM cards WHERE id = ? AND claim_owner = ? AND claim_epoch = ?`, []any{id, ch.ClaimGuard.Owner, ch.ClaimGuard.Epoch}
		if ch.LeaseEndedBy != nil {
			q, args = q+` AND claim_lease_until <= ?`, append(args, ms(*ch.LeaseEndedBy))
		}
		err := tx.QueryRowContext(ctx, d.q(q), args...).Scan(&n)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%w (claim %s/%d no longer held)", store.ErrConflict, ch.ClaimGuard.Owner, ch.ClaimGuard.Epoch)
		}
	}
	if a := ch.AgentCall; a != nil {
		if err := d.agentCall(ctx, tx, a); err != nil {
			return err
		}
	}
	if ch.CheckBlockers && ch.Card != nil && len(ch.Card.BlockedBy) > 0 {
		if err := d.checkBlockers(ctx, tx, ch.Card); err != nil {
			return err
		}
	}
	if ch.Card != nil {
		c := ch.Card
		if c.UpdatedAt.IsZero() || c.UpdatedAt.Before(now) {
			c.UpdatedAt = now
		}
		args := append(cardArgs(c), c.ID, c.Version)
		res, err := tx.ExecContext(ctx, d.q(`UPDATE cards SET title=?, body=?, state=?, state_reason=?, priority=?,
			prio_order=?, labels=?, agent=?, spec=?, blocked_by=?, block_reason=?, gave_up=?, next_attempt_at=?,
			retry_epoch=?, claim_owner=?, claim_epoch=?, claim_lease_until=?, updated_at=?, pull_request=?, version=version+1
			WHERE id=? AND version=?`), args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w (card %s is no longer at version %d)", store.ErrConflict, c.Identifier, c.Version)
		}
	}
	if r := ch.NewRun; r != nil {
		if r.ID == "" {
			r.ID = board.NewID()
		}
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO runs (id, card_id, attempt, retry_epoch, claim_epoch, node, agent,
			outcome, kind, counted, decision, exit_code, error, claimed_at, started_at, finished_at, tokens_in, tokens_out,
			cost_usd, log_path, workspace, last_output, session_id, argv, env_names, fingerprint, basis, verify, changes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
			append(runArgs(r, now), truthArgs(r)...)...); err != nil {
			if isUnique(err) {
				return fmt.Errorf("%w (attempt %d of epoch %d exists)", store.ErrConflict, r.Attempt, r.RetryEpoch)
			}
			return err
		}
	}
	if r := ch.Run; r != nil {
		cond := ""
		if ch.RunMustBeOpen {
			cond = " AND outcome = ''"
		}
		if ch.RunUnreported {
			cond += " AND report = ''"
		}
		a := runArgs(r, now)
		args := append(append(a[1:], truthArgs(r)...), r.ID)
		res, err := tx.ExecContext(ctx, d.q(`UPDATE runs SET card_id=?, attempt=?, retry_epoch=?, claim_epoch=?, node=?, agent=?,
			outcome=?, kind=?, counted=?, decision=?, exit_code=?, error=?, claimed_at=?, started_at=?, finished_at=?,
			tokens_in=?, tokens_out=?, cost_usd=?, log_path=?, workspace=?, last_output=?, session_id=?, argv=?, env_names=?,
			fingerprint=?, basis=?, verify=?, changes=? WHERE id=?`+cond), args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			if ch.RunUnreported {
				return fmt.Errorf("%w (run %s already has an outcome, or an agent report its routing did not read)", store.ErrConflict, r.ID)
			}
			return fmt.Errorf("%w (run %s already has an outcome)", store.ErrConflict, r.ID)
		}
	}
	for _, c := range ch.Comments {
		if c.ID == "" {
			c.ID = board.NewID()
		}
		if c.At.IsZero() {
			c.At = now
		}
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO comments (id, card_id, author, body, at) VALUES (?,?,?,?,?)`),
			textArgs([]any{c.ID, c.CardID, c.Author, c.Body, ms(c.At)})...); err != nil {
			return err
		}
	}
	for _, o := range ch.Outbox {
		if err := d.insertOutbox(ctx, tx, o, now); err != nil {
			return err
		}
	}
	if g := ch.AgentGuard; g != nil {
		if err := d.agentGuard(ctx, tx, g, now); err != nil {
			return err
		}
	}
	if a := ch.AgentState; a != nil {
		var res sql.Result
		var err error
		args := textArgs([]any{a.Name, a.State, a.Kind, a.Reason, msPtr(a.Until), nullText(a.Data), ms(now)})
		switch {
		case a.Version < 0:
			res, err = tx.ExecContext(ctx, d.q(`INSERT INTO agent_states (name, state, kind, reason, until, data, updated_at)
				VALUES (?,?,?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET state=excluded.state, kind=excluded.kind,
				reason=excluded.reason, until=excluded.until, data=excluded.data, updated_at=excluded.updated_at,
				version=agent_states.version+1`), args...)
		case a.Version == 0:
			res, err = tx.ExecContext(ctx, d.q(`INSERT INTO agent_states (name, state, kind, reason, until, data, updated_at)
				VALUES (?,?,?,?,?,?,?) ON CONFLICT (name) DO NOTHING`), args...)
		default:
			res, err = tx.ExecContext(ctx, d.q(`UPDATE agent_states SET state=?, kind=?, reason=?, until=?, data=?, updated_at=?,
				version=version+1 WHERE name=? AND version=?`), append(args[1:], a.Name, a.Version)...)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w (agent %s state changed meanwhile)", store.ErrConflict, a.Name)
		}
	}
	if u := ch.Uncount; u != nil {
		// After the breaker's write: on PostgreSQL that write waited for the
		// routings guarded on the breaker, so this statement sees the runs
		// they committed too.
		if _, err := tx.ExecContext(ctx, d.q(`UPDATE runs SET counted = 0 WHERE agent = ? AND fingerprint = ? AND finished_at >= ?
			AND outcome <> '' AND counted <> 0`), u.Agent, u.Fingerprint, ms(u.Since)); err != nil {
			return err
		}
	}
	if err := d.progressAll(ctx, tx, ch.Progress); err != nil {
		return err
	}
	if c := ch.LiveCap; c != nil {
		return d.liveCap(ctx, tx, c)
	}
	return nil
}

// lockLiveCaps takes, on PostgreSQL, the advisory lock of every agent the
// changes cap (LiveCap), in name order and before any row is touched, held
// until commit: a capped change's count then waits for every other
// transaction capping the same agent, and two transactions cannot deadlock
// on the locks and their cards' rows taken in different orders. SQLite has
// one writer at a time already.
func (d *DB) lockLiveCaps(ctx context.Context, tx *sql.Tx, chs []store.Change) error {
	if d.dialect != postgres {
		return nil
	}
	var agents []string
	for _, ch := range chs {
		if ch.LiveCap != nil && !slices.Contains(agents, ch.LiveCap.Agent) {
			agents = append(agents, ch.LiveCap.Agent)
		}
	}
	slices.Sort(agents)
	for _, a := range agents {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "drover.live_cap."+a); err != nil {
			return err
		}
	}
	return nil
}

// liveCap refuses a change that leaves more than c.Max open runs of
// c.Agent, counted under the lock lockLiveCaps took.
func (d *DB) liveCap(ctx context.Context, tx *sql.Tx, c *store.LiveCap) error {
	var n int
	if err := tx.QueryRowContext(ctx, d.q(`SELECT COUNT(*) FROM runs WHERE agent = ? AND outcome = ''`), c.Agent).Scan(&n); err != nil {
		return err
	}
	if n > c.Max {
		return fmt.Errorf("%w (agent %s has %d open runs, its cap is %d)", store.ErrConflict, c.Agent, n, c.Max)
	}
	return nil
}

// agentCall checks that a's run is open, that what it adds stays within
// its bound, and stores its report, once.
func (d *DB) agentCall(ctx context.Context, tx *sql.Tx, a *store.AgentCall) error {
	if a.Bound != nil {
		if err := d.agentBound(ctx, tx, a); err != nil {
			return err
		}
	}
	if a.Report == nil {
		var n int
		if err := tx.QueryRowContext(ctx, d.q(`SELECT COUNT(*) FROM runs WHERE id = ? AND outcome = ''`), a.RunID).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%w (run %s has ended)", store.ErrConflict, a.RunID)
		}
		return nil
	}
	b, err := json.Marshal(a.Report)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, d.q(`UPDATE runs SET report = ? WHERE id = ? AND outcome = '' AND report = ''`), string(b), a.RunID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w (run %s has ended or has a report already)", store.ErrConflict, a.RunID)
	}
	return nil
}

// agentBound refuses a's call when its run or its card holds its bound's
// number of agent-written rows already. On PostgreSQL the run's row is
// locked first, so two calls of one run count one after the other (a card
// has one live run, so that orders the card's calls too); SQLite has one
// writer.
func (d *DB) agentBound(ctx context.Context, tx *sql.Tx, a *store.AgentCall) error {
	b := a.Bound
	if d.dialect == postgres {
		var id string
		err := tx.QueryRowContext(ctx, d.q(`SELECT id FROM runs WHERE id = ? FOR UPDATE`), a.RunID).Scan(&id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	var perRun, perCard string
	switch b.Kind {
	case store.BoundComments:
		perRun = `SELECT COUNT(*) FROM events WHERE card_id = ? AND run_id = ? AND type = 'commented' AND actor LIKE 'agent:%'`
		perCard = `SELECT COUNT(*) FROM comments WHERE card_id = ? AND author LIKE 'agent:%'`
	case store.BoundProgress:
		perRun = `SELECT COUNT(*) FROM events WHERE card_id = ? AND run_id = ? AND type = 'agent_progress'`
		perCard = `SELECT COUNT(*) FROM events WHERE card_id = ? AND type = 'agent_progress'`
	default:
		return fmt.Errorf("store: unknown agent bound %q", b.Kind)
	}
	var n int
	if b.PerRun >= 0 {
		if err := tx.QueryRowContext(ctx, d.q(perRun), a.CardID, a.RunID).Scan(&n); err != nil {
			return err
		}
		if n >= b.PerRun {
			return &store.LimitError{Kind: b.Kind, Limit: b.PerRun, Count: n}
		}
	}
	if b.PerCard >= 0 {
		if err := tx.QueryRowContext(ctx, d.q(perCard), a.CardID).Scan(&n); err != nil {
			return err
		}
		if n >= b.PerCard {
			return &store.LimitError{Kind: b.Kind, PerCard: true, Limit: b.PerCard, Count: n}
		}
	}
	return nil
}

// checkBlockers refuses c's BlockedBy when it closes a cycle. It first
// writes the blocker-lock row: on PostgreSQL that row lock serialises every
// transaction checking blockers until it ends (and each statement after it
// reads what the previous holder committed); SQLite has one writer anyway.
func (d *DB) checkBlockers(ctx context.Context, tx *sql.Tx, c *board.Card) error {
	if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO counters (name, value) VALUES (?, 1)
		ON CONFLICT (name) DO UPDATE SET value = counters.value + 1`), "lock:blocked_by"); err != nil {
		return err
	}
	get := func(id string) (board.Card, bool, error) {
		var b board.Card
		var raw string
		err := tx.QueryRowContext(ctx, d.q(`SELECT id, identifier, blocked_by FROM cards WHERE id = ?`), id).Scan(&b.ID, &b.Identifier, &raw)
		if errors.Is(err, sql.ErrNoRows) {
			return b, false, nil
		}
		if err != nil {
			return b, false, err
		}
		return b, true, decodeJSON("cards", "blocked_by", id, raw, &b.BlockedBy)
	}
	for _, id := range c.BlockedBy {
		if id == c.ID {
			return &store.CycleError{Card: c.Identifier, Blocker: id, Path: []string{c.Identifier}}
		}
		path, err := board.WaitPath(id, c.ID, get)
		if err != nil {
			return err
		}
		if path != nil {
			return &store.CycleError{Card: c.Identifier, Blocker: id, Path: path}
		}
	}
	return nil
}

// Heartbeat implements store.Store.
func (d *DB) Heartbeat(ctx context.Context, cardID, owner string, epoch int64, until time.Time) error {
	res, err := d.db.ExecContext(ctx, d.q(`UPDATE cards SET claim_lease_until = ? WHERE id = ? AND claim_owner = ? AND claim_epoch = ?`),
		ms(until), cardID, owner, epoch)
	if err != nil {
		return d.wrap(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w (claim %s/%d lost)", store.ErrConflict, owner, epoch)
	}
	return nil
}

// HeartbeatAll implements store.Store: one UPDATE … RETURNING per chunk of
// claims, matching each (card, epoch) pair as a row value.
func (d *DB) HeartbeatAll(ctx context.Context, owner string, epochs map[string]int64, until time.Time) ([]string, error) {
	ids := make([]string, 0, len(epochs))
	for id := range epochs {
		ids = append(ids, id)
	}
	sort.Strings(ids) // one statement text per chunk size, and a stable lock order
	renewed := make(map[string]bool, len(ids))
	const chunk = 500
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := []any{ms(until), owner}
		for _, id := range part {
			args = append(args, id, epochs[id])
		}
		pair := "(?, ?),"
		if d.dialect == postgres {
			pair = "(?::text, ?::bigint)," // VALUES would type bare parameters as text
		}
		rows, err := d.db.QueryContext(ctx, d.q(`UPDATE cards SET claim_lease_until = ? WHERE claim_owner = ? AND (id, claim_epoch) IN (VALUES `+
			strings.TrimSuffix(strings.Repeat(pair, len(part)), ",")+`) RETURNING id`), args...)
		if err != nil {
			return nil, d.wrap(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, d.wrap(err)
			}
			renewed[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, d.wrap(err)
		}
		if err := rows.Err(); err != nil {
			return nil, d.wrap(err)
		}
	}
	var lost []string
	for _, id := range ids {
		if !renewed[id] {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// UpdateRunProgress implements store.Store.
func (d *DB) UpdateRunProgress(ctx context.Context, runID string, p store.RunProgress) error {
	return d.wrap(d.progressIn(ctx, d.db, runID, p))
}

// execer runs a statement on the pool (*sql.DB) or in a transaction
// (*sql.Tx).
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// progressIn writes an open run's live figures with x (on the pool, or in
// a transaction for Change.Progress).
func (d *DB) progressIn(ctx context.Context, x execer, runID string, p store.RunProgress) error {
	var argv, envNames string
	if p.Argv != nil {
		argv, envNames = strList(p.Argv), strList(p.EnvNames)
	}
	_, err := x.ExecContext(ctx, d.q(`UPDATE runs SET last_output = ?, tokens_in = ?, tokens_out = ?, cost_usd = ?,
		started_at = COALESCE(started_at, ?), log_path = CASE WHEN ? = '' THEN log_path ELSE ? END,
		workspace = CASE WHEN ? = '' THEN workspace ELSE ? END,
		argv = CASE WHEN ? = '' THEN argv ELSE ? END, env_names = CASE WHEN ? = '' THEN env_names ELSE ? END
		WHERE id = ? AND outcome = ''`),
		textArgs([]any{p.LastOutput, p.TokensIn, p.TokensOut, p.CostUSD, msPtr(p.StartedAt), p.LogPath, p.LogPath, p.Workspace, p.Workspace,
			argv, argv, envNames, envNames, runID})...)
	return d.wrap(err)
}

// agentGuard checks that g's agent state is still at g.Version. A guard on
// "no row yet" (0) inserts the closed row the missing one stands for: on
// PostgreSQL a row lock cannot be taken on a row that does not exist, but
// an insert waits for another transaction's insert of the same name, so a
// breaker write in flight (a hold) is seen either way.
func (d *DB) agentGuard(ctx context.Context, tx *sql.Tx, g *store.AgentGuard, now time.Time) error {
	if g.Version == 0 {
		res, err := tx.ExecContext(ctx, d.q(`INSERT INTO agent_states (name, state, kind, reason, until, data, updated_at)
			VALUES (?,'closed','','',NULL,'{"state":"closed"}',?) ON CONFLICT (name) DO NOTHING`), g.Name, ms(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil // no row was there: the state is the closed one this routing read
		}
	}
	lock := ""
	if d.dialect == postgres {
		lock = " FOR SHARE" // waits for a breaker write in flight, then reads what it wrote
	}
	var v int64
	if err := tx.QueryRowContext(ctx, d.q(`SELECT version FROM agent_states WHERE name = ?`+lock), g.Name).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if v != g.Version {
		return fmt.Errorf("%w (agent %s state changed meanwhile)", store.ErrConflict, g.Name)
	}
	return nil
}
