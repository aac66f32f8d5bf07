package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

const runCols = `id, card_id, attempt, retry_epoch, claim_epoch, node, agent, outcome, kind, counted, decision,
 exit_code, error, claimed_at, started_at, finished_at, tokens_in, tokens_out, cost_usd, log_path, workspace, last_output, session_id, argv, env_names, report,
 fingerprint, basis, verify, changes`

// truthArgs are the values of runs.fingerprint, runs.basis, runs.verify
// and runs.changes.
func truthArgs(r *board.Run) []any {
	basis, verify, changes := "", "", ""
	if len(r.Basis) > 0 {
		b, _ := json.Marshal(r.Basis)
		basis = string(b)
	}
	if r.Verify != nil {
		b, _ := json.Marshal(r.Verify)
		verify = string(b)
	}
	if r.Changes != nil {
		b, _ := json.Marshal(r.Changes)
		changes = string(b)
	}
	return textArgs([]any{r.Fingerprint, basis, verify, changes})
}

// runArgs are the values for every column of runs; a run without a claim
// time is claimed now.
func runArgs(r *board.Run, now time.Time) []any {
	var exit any
	if r.ExitCode != nil {
		exit = *r.ExitCode
	}
	counted := 0
	if r.Counted {
		counted = 1
	}
	claimed := r.ClaimedAt
	if claimed.IsZero() {
		claimed = now
	}
	return textArgs([]any{r.ID, r.CardID, r.Attempt, r.RetryEpoch, r.ClaimEpoch, r.Node, r.Agent, string(r.Outcome), r.Kind,
		counted, r.Decision, exit, r.Error, ms(claimed), msPtr(r.StartedAt), msPtr(r.FinishedAt), r.TokensIn,
		r.TokensOut, r.CostUSD, r.LogPath, r.Workspace, r.LastOutput, r.SessionID, strList(r.Argv), strList(r.EnvNames)})
}

func scanRun(s scanner) (board.Run, error) {
	var r board.Run
	var outcome string
	var counted int
	var exit sql.NullInt64
	var claimed int64
	var started, finished sql.NullInt64
	var argv, envNames, report, basis, verify, changes string
	err := s.Scan(&r.ID, &r.CardID, &r.Attempt, &r.RetryEpoch, &r.ClaimEpoch, &r.Node, &r.Agent, &outcome, &r.Kind,
		&counted, &r.Decision, &exit, &r.Error, &claimed, &started, &finished, &r.TokensIn, &r.TokensOut, &r.CostUSD,
		&r.LogPath, &r.Workspace, &r.LastOutput, &r.SessionID, &argv, &envNames, &report, &r.Fingerprint, &basis, &verify, &changes)
	if err != nil {
		return r, err
	}
	if basis != "" {
		if err := decodeJSON("runs", "basis", r.ID, basis, &r.Basis); err != nil {
			return r, err
		}
	}
	if verify != "" {
		r.Verify = &board.VerifyResult{}
		if err := decodeJSON("runs", "verify", r.ID, verify, r.Verify); err != nil {
			return r, err
		}
	}
	if changes != "" {
		r.Changes = &board.Changes{}
		if err := decodeJSON("runs", "changes", r.ID, changes, r.Changes); err != nil {
			return r, err
		}
	}
	if err := decodeJSON("runs", "argv", r.ID, argv, &r.Argv); err != nil {
		return r, err
	}
	if err := decodeJSON("runs", "env_names", r.ID, envNames, &r.EnvNames); err != nil {
		return r, err
	}
	if report != "" {
		r.Report = &board.AgentReport{}
		if err := decodeJSON("runs", "report", r.ID, report, r.Report); err != nil {
			return r, err
		}
	}
	r.Outcome = board.Outcome(outcome)
	r.Counted = counted != 0
	if exit.Valid {
		v := int(exit.Int64)
		r.ExitCode = &v
	}
	r.ClaimedAt = fromMs(claimed)
	r.StartedAt, r.FinishedAt = fromNullMs(started), fromNullMs(finished)
	return r, nil
}

// GetRun implements store.Store.
func (d *DB) GetRun(ctx context.Context, id string) (board.Run, error) {
	r, err := scanRun(d.db.QueryRowContext(ctx, d.q(`SELECT `+runCols+` FROM runs WHERE id = ?`), id))
	return r, d.wrap(err)
}

// ListRuns implements store.Store. Runs come oldest first (by card, epoch,
// attempt) unless Newest is set.
func (d *DB) ListRuns(ctx context.Context, f store.RunFilter) ([]board.Run, error) {
	var where []string
	var args []any
	if f.CardID != "" {
		where = append(where, "card_id = ?")
		args = append(args, f.CardID)
	}
	if len(f.CardIDs) > 0 {
		where = append(where, "card_id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.CardIDs)), ",")+")")
		for _, id := range f.CardIDs {
			args = append(args, id)
		}
	}
	if f.RetryEpoch != nil {
		where = append(where, "retry_epoch = ?")
		args = append(args, *f.RetryEpoch)
	}
	if f.Open != nil {
		if *f.Open {
			where = append(where, "outcome = ''")
		} else {
			where = append(where, "outcome <> ''")
		}
	}
	if f.Node != "" {
		where = append(where, "node = ?")
		args = append(args, f.Node)
	}
	if f.ClaimedSince != nil {
		where = append(where, "claimed_at >= ?")
		args = append(args, ms(*f.ClaimedSince))
	}
	if f.Agent != "" {
		where = append(where, "agent = ?")
		args = append(args, f.Agent)
	}
	if f.Fingerprint != "" {
		where = append(where, "fingerprint = ?")
		args = append(args, f.Fingerprint)
	}
	if f.FinishedSince != nil {
		where = append(where, "finished_at >= ?")
		args = append(args, ms(*f.FinishedSince))
	}
	if f.Outcome != "" {
		where = append(where, "outcome = ?")
		args = append(args, string(f.Outcome))
	}
	q := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Newest {
		q += " ORDER BY claimed_at DESC, id DESC"
	} else {
		q += " ORDER BY claimed_at, retry_epoch, attempt, id"
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
		if f.Offset > 0 {
			q += fmt.Sprintf(" OFFSET %d", f.Offset)
		}
	}
	return queryAll(ctx, d, d.db, d.q(q), args, scanRun)
}

// Spend implements store.Store.
func (d *DB) Spend(ctx context.Context, since time.Time, cardID string) (float64, error) {
	q := `SELECT COALESCE(SUM(cost_usd), 0) FROM runs WHERE claimed_at >= ?`
	args := []any{ms(since)}
	if cardID != "" {
		q += ` AND card_id = ?`
		args = append(args, cardID)
	}
	var v float64
	err := d.db.QueryRowContext(ctx, d.q(q), args...).Scan(&v)
	return v, d.wrap(err)
}
