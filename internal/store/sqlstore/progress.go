package sqlstore

import (
	"context"
	"database/sql"
	"reflect"
	"strings"

	"github.com/drover-dev/drover/internal/store"
)

// progressChunk bounds the rows of one batched progress statement (5
// parameters a row, well under PostgreSQL's 65,535).
const progressChunk = 1000

// progressAll writes the live figures of many runs. On PostgreSQL the plain
// figures (output, tokens, cost: what a running agent reports every
// second) go in one UPDATE … FROM (VALUES …) per chunk instead of one
// statement per run, so a node's flush is one statement whatever its number
// of agents; a run's first report (its start, log, workspace, argv) keeps
// a statement of its own. SQLite runs in process: a statement per run
// costs no round trip there.
func (d *DB) progressAll(ctx context.Context, tx *sql.Tx, ps []store.RunProgress) error {
	var plain []store.RunProgress
	for _, p := range ps {
		if d.dialect != postgres || p.StartedAt != nil || p.LogPath != "" || p.Workspace != "" || p.Argv != nil {
			if err := d.progressIn(ctx, tx, p.RunID, p); err != nil {
				return err
			}
			continue
		}
		plain = append(plain, p)
	}
	for start := 0; start < len(plain); start += progressChunk {
		part := plain[start:min(start+progressChunk, len(plain))]
		args := make([]any, 0, 5*len(part))
		for _, p := range part {
			args = append(args, p.RunID, p.LastOutput, p.TokensIn, p.TokensOut, p.CostUSD)
		}
		row := "(?::text, ?::text, ?::bigint, ?::bigint, ?::double precision),"
		if _, err := tx.ExecContext(ctx, d.q(`UPDATE runs SET last_output = v.out, tokens_in = v.tin, tokens_out = v.tout, cost_usd = v.cost
			FROM (VALUES `+strings.TrimSuffix(strings.Repeat(row, len(part)), ",")+`) AS v(id, out, tin, tout, cost)
			WHERE runs.id = v.id AND runs.outcome = ''`), textArgs(args)...); err != nil {
			return err
		}
	}
	return nil
}

// progressOnly reports whether ch writes nothing but runs' live figures:
// such a change is not announced to watchers (store.Store.Watch), since
// nothing waits on a running agent's output, and announcing it woke every
// node of a fleet several times a second for each node's flush.
func progressOnly(ch store.Change) bool {
	if len(ch.Progress) == 0 {
		return false
	}
	ch.Progress = nil
	return reflect.ValueOf(ch).IsZero()
}
