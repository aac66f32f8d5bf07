package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// ApplyAll's fast path. The savepoint path (applyIn per change) costs
// several round trips per change, and on PostgreSQL a dispatcher's batch of
// 200 claims or routings was bound by them. The fast path writes the whole
// batch optimistically with one statement per table and kind: the card
// compare-and-sets (with their claim guards) as one UPDATE, the other
// claim guards as one SELECT, the new runs as one INSERT, the run updates
// as one UPDATE, then the comments, outbox rows, progress and events. Each
// guarded statement returns the rows it matched; when every guard of every
// change held, the transaction commits and has written exactly what the
// savepoint path would have. When anything is off (a guard refused, a
// unique attempt exists, or any error at all) the transaction is rolled
// back whole and the batch runs again through the savepoint path, which
// reports each change's refusal as before. So the fast path never decides
// a refusal; it only skips round trips when there is none.
//
// Equivalence needs the batch's writes not to depend on their order. A
// batch takes the fast path only when (bulkable):
//   - no change has CheckBlockers (with blockers), AgentCall or AgentState
//     (they read what earlier changes wrote, or are rare);
//   - card ids of Card are distinct, and no claim guard of a change without
//     Card names a card another change writes (a guard sees the card as the
//     changes before it left it);
//   - ids of Run are distinct and none is a NewRun of the batch;
//   - Progress run ids are distinct and none is a NewRun or Run of the batch;
//   - outbox keys are distinct (the first of a key wins either way, but
//     distinct keys need no argument).
// Duplicate NewRun ids or attempts need no rule: the INSERT skips the
// duplicate (ON CONFLICT DO NOTHING), which the returned count reveals.

// errBulkRefused: a guard of the fast path did not hold; nothing is kept.
var errBulkRefused = errors.New("sqlstore: a change of the batch was refused")

func bulkable(chs []store.Change) bool {
	cards := map[string]bool{}
	runs := map[string]bool{} // NewRun and Run ids
	for i := range chs {
		ch := &chs[i]
		if ch.AgentCall != nil || ch.AgentState != nil || (ch.CheckBlockers && ch.Card != nil && len(ch.Card.BlockedBy) > 0) {
			return false
		}
		if len(ch.Uncount) > 0 || ch.AgentGuard != nil || (ch.NewRun != nil && (ch.NewRun.Fingerprint != "" || len(ch.NewRun.Basis) > 0)) ||
			(ch.Run != nil && (ch.Run.Fingerprint != "" || len(ch.Run.Basis) > 0)) {
			return false // columns the set-based path does not write
		}
		if ch.Card != nil {
			if cards[ch.Card.ID] {
				return false
			}
			cards[ch.Card.ID] = true
		}
		if ch.NewRun != nil && ch.NewRun.ID != "" {
			runs[ch.NewRun.ID] = true
		}
	}
	keys := map[string]bool{}
	for i := range chs {
		ch := &chs[i]
		if ch.ClaimGuard != nil && ch.Card == nil && ch.Run != nil && cards[ch.Run.CardID] {
			return false
		}
		if ch.ClaimGuard != nil && ch.Card == nil && ch.Run == nil {
			return false // guards card "": refused, let the savepoint path say so
		}
		if r := ch.Run; r != nil {
			if runs[r.ID] {
				return false
			}
			runs[r.ID] = true
		}
		for _, o := range ch.Outbox {
			if keys[o.Key] {
				return false
			}
			keys[o.Key] = true
		}
	}
	for i := range chs {
		for _, p := range chs[i].Progress {
			if runs[p.RunID] {
				return false
			}
			runs[p.RunID] = true
		}
	}
	return true
}

var (
	cardBulkCols = bulkCols{"k", "version:bigint", "g:bigint", "gowner", "gepoch:bigint", "gended:bigint",
		"title", "body", "state", "state_reason", "priority:bigint", "prio_order:bigint", "labels", "agent", "spec",
		"blocked_by", "block_reason", "gave_up", "next_attempt_at:bigint", "retry_epoch:bigint", "claim_owner",
		"claim_epoch:bigint", "claim_lease_until:bigint", "updated_at:bigint"}
	guardBulkCols  = bulkCols{"i:bigint", "k", "gowner", "gepoch:bigint", "gended:bigint"}
	runValueCols   = []string{"card_id", "attempt:bigint", "retry_epoch:bigint", "claim_epoch:bigint", "node", "agent", "outcome", "kind", "counted:bigint", "decision", "exit_code:bigint", "error", "claimed_at:bigint", "started_at:bigint", "finished_at:bigint", "tokens_in:bigint", "tokens_out:bigint", "cost_usd:float8", "log_path", "workspace", "last_output", "session_id", "argv", "env_names"}
	newRunBulkCols = append(bulkCols{"id"}, runValueCols...)
	runBulkCols    = append(bulkCols{"k", "open:bigint"}, runValueCols...)
	commentCols    = bulkCols{"id", "card_id", "author", "body", "at:bigint"}
	outboxBulkCols = bulkCols{"id", "key", "channel", "event", "card_id", "run_id", "payload", "created_at:bigint", "next_at:bigint"}
	progressCols   = bulkCols{"k", "lo", "ti:bigint", "tout:bigint", "cost:float8", "sa:bigint", "lp", "ws", "av", "en"}
	eventBulkCols  = bulkCols{"ord:bigint", "at:bigint", "card_id", "run_id", "type", "actor", "reason", "data"}
)

// applyBulk writes chs (bulkable) in tx, or returns errBulkRefused.
func (d *DB) applyBulk(ctx context.Context, tx *sql.Tx, chs []store.Change, now time.Time) error {
	var cards, guards, newRuns, runs, comments, outbox, progress [][]any
	var events []board.Event
	for i := range chs {
		ch := &chs[i]
		var g []any // the claim guard's owner, epoch, lease end
		if cg := ch.ClaimGuard; cg != nil {
			var ended any
			if ch.LeaseEndedBy != nil {
				ended = ms(*ch.LeaseEndedBy)
			}
			g = []any{cg.Owner, cg.Epoch, ended}
		}
		if c := ch.Card; c != nil {
			if c.UpdatedAt.IsZero() || c.UpdatedAt.Before(now) {
				c.UpdatedAt = now
			}
			row := []any{c.ID, c.Version, 0, nil, nil, nil}
			if g != nil {
				row[2] = 1
				copy(row[3:], g)
			}
			cards = append(cards, append(row, cardArgs(c)...))
		} else if g != nil {
			guards = append(guards, append([]any{i, ch.Run.CardID}, g...))
		}
		if r := ch.NewRun; r != nil {
			if r.ID == "" {
				r.ID = board.NewID()
			}
			newRuns = append(newRuns, runArgs(r, now))
		}
		if r := ch.Run; r != nil {
			open := 0
			if ch.RunMustBeOpen {
				open = 1
			}
			runs = append(runs, append([]any{r.ID, open}, runArgs(r, now)[1:]...))
		}
		for _, c := range ch.Comments {
			if c.ID == "" {
				c.ID = board.NewID()
			}
			if c.At.IsZero() {
				c.At = now
			}
			comments = append(comments, textArgs([]any{c.ID, c.CardID, c.Author, c.Body, ms(c.At)}))
		}
		for _, o := range ch.Outbox {
			outbox = append(outbox, outboxRow(o, now))
		}
		for _, p := range ch.Progress {
			progress = append(progress, progressRow(p))
		}
		events = append(events, stampEvents(ch.Events, now)...)
	}
	all := func(c bulkCols, rows [][]any, stmt func(string) string) error {
		if len(rows) == 0 {
			return nil
		}
		n, err := d.bulk(ctx, tx, c, rows, true, stmt)
		if err != nil {
			return err
		}
		if n != len(rows) {
			return errBulkRefused
		}
		return nil
	}
	if err := all(guardBulkCols, guards, func(src string) string {
		return `SELECT v.i FROM ` + src + ` AS v JOIN cards ON cards.id = v.k AND cards.claim_owner = v.gowner
			AND cards.claim_epoch = v.gepoch AND (v.gended IS NULL OR cards.claim_lease_until <= v.gended)`
	}); err != nil {
		return err
	}
	if err := all(cardBulkCols, cards, func(src string) string {
		// On PostgreSQL the rows are locked first, in card id order, as the
		// savepoint path locks them change by change (the dispatcher sorts
		// its batches by card id): two nodes' batches then lock rows in one
		// order whatever plan the UPDATE's join gets. NO KEY UPDATE is the
		// lock a plain UPDATE of non-key columns takes, so it does not wait
		// on (or deadlock with) the KEY SHARE locks that inserts of runs and
		// comments take on their card. SQLite has one writer.
		with, from := "", src+" AS v"
		if d.dialect == postgres {
			with = `WITH v AS ` + src + `, locked AS (SELECT cards.id AS lid FROM cards JOIN v ON cards.id = v.k
				ORDER BY cards.id FOR NO KEY UPDATE OF cards) `
			from = "v JOIN locked ON locked.lid = v.k"
		}
		return with + `UPDATE cards SET title=v.title, body=v.body, state=v.state, state_reason=v.state_reason,
			priority=v.priority, prio_order=v.prio_order, labels=v.labels, agent=v.agent, spec=v.spec,
			blocked_by=v.blocked_by, block_reason=v.block_reason, gave_up=v.gave_up, next_attempt_at=v.next_attempt_at,
			retry_epoch=v.retry_epoch, claim_owner=v.claim_owner, claim_epoch=v.claim_epoch,
			claim_lease_until=v.claim_lease_until, updated_at=v.updated_at, version=cards.version+1
			FROM ` + from + ` WHERE cards.id = v.k AND cards.version = v.version
			AND (v.g = 0 OR (cards.claim_owner = v.gowner AND cards.claim_epoch = v.gepoch
				AND (v.gended IS NULL OR cards.claim_lease_until <= v.gended))) RETURNING id`
	}); err != nil {
		return err
	}
	if err := all(newRunBulkCols, newRuns, func(src string) string {
		cols := joinNames(newRunBulkCols)
		return `INSERT INTO runs (` + cols + `) SELECT ` + cols + ` FROM ` + src + ` AS v WHERE true
			ON CONFLICT DO NOTHING RETURNING id`
	}); err != nil {
		return err
	}
	if err := all(runBulkCols, runs, func(src string) string {
		return `UPDATE runs SET ` + setFrom(runValueCols) + ` FROM ` + src + ` AS v
			WHERE runs.id = v.k AND (v.open = 0 OR runs.outcome = '') RETURNING id`
	}); err != nil {
		return err
	}
	if len(comments) > 0 {
		if _, err := d.bulk(ctx, tx, commentCols, comments, false, func(src string) string {
			return `INSERT INTO comments (id, card_id, author, body, at) SELECT id, card_id, author, body, at FROM ` + src + ` AS v`
		}); err != nil {
			return err
		}
	}
	if len(outbox) > 0 {
		if _, err := d.bulk(ctx, tx, outboxBulkCols, outbox, false, func(src string) string {
			cols := joinNames(outboxBulkCols)
			return `INSERT INTO outbox (` + cols + `) SELECT ` + cols + ` FROM ` + src + ` AS v WHERE true ON CONFLICT (key) DO NOTHING`
		}); err != nil {
			return err
		}
	}
	if len(progress) > 0 {
		if _, err := d.bulk(ctx, tx, progressCols, progress, false, func(src string) string {
			return `UPDATE runs SET last_output = v.lo, tokens_in = v.ti, tokens_out = v.tout, cost_usd = v.cost,
				started_at = COALESCE(runs.started_at, v.sa), log_path = CASE WHEN v.lp = '' THEN runs.log_path ELSE v.lp END,
				workspace = CASE WHEN v.ws = '' THEN runs.workspace ELSE v.ws END,
				argv = CASE WHEN v.av = '' THEN runs.argv ELSE v.av END, env_names = CASE WHEN v.en = '' THEN runs.env_names ELSE v.en END
				FROM ` + src + ` AS v WHERE runs.id = v.k AND runs.outcome = ''`
		}); err != nil {
			return err
		}
	}
	return d.insertEvents(ctx, tx, events)
}

func joinNames(c bulkCols) string { return strings.Join(c.names(), ", ") }

// setFrom is "col=v.col, …" for cols.
func setFrom(cols []string) string {
	var s string
	for i, n := range bulkCols(cols).names() {
		if i > 0 {
			s += ", "
		}
		s += n + "=v." + n
	}
	return s
}

// outboxRow is o's row of outbox as insertOutbox writes it.
func outboxRow(o store.OutboxItem, now time.Time) []any {
	if o.ID == "" {
		o.ID = board.NewID()
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = now
	}
	if o.NextAt.IsZero() {
		o.NextAt = now
	}
	return textArgs([]any{o.ID, o.Key, o.Channel, o.Event, o.CardID, o.RunID, string(o.Payload), ms(o.CreatedAt), ms(o.NextAt)})
}

// progressRow is p's row for the bulk progress UPDATE, as progressIn
// binds it.
func progressRow(p store.RunProgress) []any {
	var argv, envNames string
	if p.Argv != nil {
		argv, envNames = strList(p.Argv), strList(p.EnvNames)
	}
	return textArgs([]any{p.RunID, p.LastOutput, p.TokensIn, p.TokensOut, p.CostUSD, msPtr(p.StartedAt), p.LogPath, p.Workspace, argv, envNames})
}

// bulkOn: ApplyAll tries the fast path first on this backend.
func (d *DB) bulkOn() bool { return !d.noBulk }
