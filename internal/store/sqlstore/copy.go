package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
)

// boardTable is a table that holds part of a board, with its primary key.
type boardTable struct {
	name, key string
	intKey    bool // the key is an integer (ordered as a number, no collation)
}

// boardTables are the tables a copy moves, parents before the rows that
// refer to them. nodes and leader are left out on purpose: they describe
// the processes that served the source, not the board, and the first serve
// on the target writes its own. gc_reports (the latest retention report)
// goes along so drover status on the target still says when history was
// last pruned.
var boardTables = []boardTable{
	{"counters", "name", false}, {"cards", "id", false}, {"runs", "id", false}, {"events", "seq", true},
	{"comments", "id", false}, {"outbox", "id", false}, {"agent_states", "name", false}, {"gc_reports", "id", true},
}

// BoardTables names the tables a copy moves, in copy order (parents first).
func BoardTables() []string {
	out := make([]string, len(boardTables))
	for i, t := range boardTables {
		out[i] = t.name
	}
	return out
}

// TableSum is one table's row count and checksum: the SHA-256 of its rows
// in primary-key order, each column (sorted by name) encoded by type, so
// the same rows give the same sum on SQLite and PostgreSQL.
type TableSum struct {
	Table    string `json:"table"`
	Rows     int64  `json:"rows"`
	Checksum string `json:"checksum"`
}

// CopyReport is what a copy moved and verified.
type CopyReport struct {
	Tables []TableSum `json:"tables"`
	// EventSeq is the last event sequence number the target has handed out:
	// the next event on it gets a higher one, as it would have on the source.
	EventSeq int64 `json:"event_seq"`
}

// CopyOptions tune Copy.
type CopyOptions struct {
	// Progress, when set, is told after every batch how many rows of table
	// are in the target so far, and how many the table holds.
	Progress func(table string, done, total int64)
}

// ErrTargetNotEmpty is returned by Copy when the target already holds rows.
var ErrTargetNotEmpty = errors.New("the target store is not empty")

// copyBatch is the rows per INSERT: 29 columns × 200 rows stays well below
// both backends' parameter limits.
const copyBatch = 200

// Copy copies every board table of src into dst in one transaction on dst:
// all or nothing. It reads src in one transaction too (a consistent
// snapshot; on SQLite it holds the write lock, so nothing changes under
// it). dst must be empty (ErrTargetNotEmpty names what it holds). Before
// committing, it recounts and re-checksums every table on dst and rolls
// back unless they equal src's; the event sequence on dst is set so new
// events continue after the copied ones.
func Copy(ctx context.Context, src, dst *DB, opts CopyOptions) (CopyReport, error) {
	var rep CopyReport
	srcTx, err := src.db.BeginTx(ctx, src.snapshotOpts())
	if err != nil {
		return rep, src.wrap(err)
	}
	defer srcTx.Rollback() //nolint:errcheck // read only
	dstTx, err := dst.db.BeginTx(ctx, nil)
	if err != nil {
		return rep, dst.wrap(err)
	}
	defer dstTx.Rollback() //nolint:errcheck // a no-op after Commit
	if err := dst.requireEmpty(ctx, dstTx); err != nil {
		return rep, err
	}
	for _, t := range boardTables {
		sum, err := copyTable(ctx, t, src, srcTx, dst, dstTx, opts.Progress)
		if err != nil {
			return rep, err
		}
		rep.Tables = append(rep.Tables, sum)
	}
	if rep.EventSeq, err = src.eventSeq(ctx, srcTx); err != nil {
		return rep, err
	}
	if err := dst.setEventSeq(ctx, dstTx, rep.EventSeq); err != nil {
		return rep, err
	}
	got, err := dst.sums(ctx, dstTx)
	if err != nil {
		return rep, err
	}
	for i, s := range got {
		if s != rep.Tables[i] {
			return rep, fmt.Errorf("store copy: %s differs after the copy (source %d rows, sum %s; target %d rows, sum %s); nothing was committed",
				s.Table, rep.Tables[i].Rows, rep.Tables[i].Checksum, s.Rows, s.Checksum)
		}
	}
	if err := dstTx.Commit(); err != nil {
		return rep, dst.wrap(err)
	}
	return rep, nil
}

// Checksums counts and checksums every board table, in one snapshot.
func (d *DB) Checksums(ctx context.Context) ([]TableSum, error) {
	tx, err := d.db.BeginTx(ctx, d.snapshotOpts())
	if err != nil {
		return nil, d.wrap(err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	return d.sums(ctx, tx)
}

// DumpTable returns every row of a board table in primary-key order, each
// column (sorted by name) encoded as the checksum encodes it. Tests compare
// two stores row by row with it.
func (d *DB) DumpTable(ctx context.Context, table string) ([]string, error) {
	i := slices.IndexFunc(boardTables, func(t boardTable) bool { return t.name == table })
	if i < 0 {
		return nil, fmt.Errorf("store: %q is not a board table", table)
	}
	var out []string
	err := d.eachRow(ctx, d.db, boardTables[i], func(cols []string, vals []any) error {
		out = append(out, encodeRow(cols, vals))
		return nil
	})
	return out, err
}

// snapshotOpts are the options of a read that must see one moment.
func (d *DB) snapshotOpts() *sql.TxOptions {
	if d.dialect == postgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return nil
}

// requireEmpty refuses a target that holds any board row, naming the tables.
func (d *DB) requireEmpty(ctx context.Context, q querier) error {
	var found []string
	for _, t := range boardTables {
		var n int64
		rows, err := q.QueryContext(ctx, `SELECT COUNT(*) FROM `+t.name)
		if err != nil {
			return d.wrap(err)
		}
		if rows.Next() {
			err = rows.Scan(&n)
		}
		rows.Close()
		if err != nil {
			return d.wrap(err)
		}
		if n > 0 {
			found = append(found, fmt.Sprintf("%s %d", t.name, n))
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("%w: it holds %s; copy into a new SQLite file or an empty PostgreSQL database or schema", ErrTargetNotEmpty, strings.Join(found, ", "))
	}
	return nil
}

// columns lists table's columns, sorted by name.
func (d *DB) columns(ctx context.Context, q querier, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT * FROM `+table+` WHERE 1 = 0`)
	if err != nil {
		return nil, d.wrap(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, d.wrap(err)
	}
	slices.Sort(cols)
	return cols, nil
}

// eachRow calls fn with every row of t in primary-key order (byte order of
// text keys on both backends), columns sorted by name.
func (d *DB) eachRow(ctx context.Context, q querier, t boardTable, fn func(cols []string, vals []any) error) error {
	cols, err := d.columns(ctx, q, t.name)
	if err != nil {
		return err
	}
	order := t.key
	if d.dialect == postgres && !t.intKey {
		order += ` COLLATE "C"`
	}
	rows, err := q.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+t.name+` ORDER BY `+order)
	if err != nil {
		return d.wrap(err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return d.wrap(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		if err := fn(cols, vals); err != nil {
			return err
		}
	}
	return d.wrap(rows.Err())
}

// sums counts and checksums every board table through q.
func (d *DB) sums(ctx context.Context, q querier) ([]TableSum, error) {
	var out []TableSum
	for _, t := range boardTables {
		s := TableSum{Table: t.name}
		h := sha256.New()
		err := d.eachRow(ctx, q, t, func(cols []string, vals []any) error {
			s.Rows++
			writeRow(h, cols, vals)
			return nil
		})
		if err != nil {
			return nil, err
		}
		s.Checksum = hex.EncodeToString(h.Sum(nil))
		out = append(out, s)
	}
	return out, nil
}

// copyTable streams t from src to dst in batches and returns src's sum.
func copyTable(ctx context.Context, t boardTable, src *DB, srcTx *sql.Tx, dst *DB, dstTx *sql.Tx, progress func(string, int64, int64)) (TableSum, error) {
	sum := TableSum{Table: t.name}
	total, err := count(ctx, srcTx, t.name)
	if err != nil {
		return sum, src.wrap(err)
	}
	dstCols, err := dst.columns(ctx, dstTx, t.name)
	if err != nil {
		return sum, err
	}
	h := sha256.New()
	var batch []any
	var cols []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n := len(batch) / len(cols)
		row := "(" + strings.Repeat("?,", len(cols)-1) + "?)"
		stmt := `INSERT INTO ` + t.name + ` (` + strings.Join(cols, ", ") + `)`
		if dst.dialect == postgres && t.key == "seq" {
			stmt += ` OVERRIDING SYSTEM VALUE` // events.seq is an identity column
		}
		stmt += ` VALUES ` + strings.Repeat(row+",", n-1) + row
		if _, err := dstTx.ExecContext(ctx, dst.q(stmt), batch...); err != nil {
			return fmt.Errorf("store copy: writing %s: %w", t.name, dst.wrap(err))
		}
		batch = batch[:0]
		if progress != nil {
			progress(t.name, sum.Rows, total)
		}
		return nil
	}
	err = src.eachRow(ctx, srcTx, t, func(c []string, vals []any) error {
		if cols == nil {
			if !slices.Equal(c, dstCols) {
				return fmt.Errorf("store copy: table %s has columns %v on the source and %v on the target; copy between stores of the same drover version", t.name, c, dstCols)
			}
			cols = c
		}
		sum.Rows++
		writeRow(h, c, vals)
		batch = append(batch, vals...)
		if len(batch) >= copyBatch*len(cols) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return sum, err
	}
	if total == 0 && progress != nil {
		progress(t.name, 0, 0)
	}
	sum.Checksum = hex.EncodeToString(h.Sum(nil))
	return sum, nil
}

func count(ctx context.Context, tx *sql.Tx, table string) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n)
	return n, err
}

// eventSeq is the last event sequence number d has handed out (which may
// be past the highest stored one, when events were deleted).
func (d *DB) eventSeq(ctx context.Context, tx *sql.Tx) (int64, error) {
	var seq, maxSeq sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(seq) FROM events`).Scan(&maxSeq); err != nil {
		return 0, d.wrap(err)
	}
	q := `SELECT seq FROM sqlite_sequence WHERE name = 'events'`
	if d.dialect == postgres {
		q = `SELECT pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass)`
	}
	if err := tx.QueryRowContext(ctx, q).Scan(&seq); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, d.wrap(err)
	}
	return max(seq.Int64, maxSeq.Int64), nil
}

// setEventSeq makes the next event on d get a number above seq.
func (d *DB) setEventSeq(ctx context.Context, tx *sql.Tx, seq int64) error {
	if seq <= 0 {
		return nil
	}
	var err error
	if d.dialect == postgres {
		_, err = tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('events', 'seq'), $1, true)`, seq)
	} else {
		if _, err = tx.ExecContext(ctx, `DELETE FROM sqlite_sequence WHERE name = 'events'`); err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)`, seq)
		}
	}
	return d.wrap(err)
}

// writeRow feeds one row's canonical encoding to h.
func writeRow(h hash.Hash, cols []string, vals []any) {
	h.Write([]byte(encodeRow(cols, vals)))
	h.Write([]byte{'\n'})
}

// encodeRow is a row as "col=type:value" fields, with lengths before text
// so no value can pass for two.
func encodeRow(cols []string, vals []any) string {
	var b strings.Builder
	for i, c := range cols {
		b.WriteString(c)
		b.WriteByte('=')
		switch v := vals[i].(type) {
		case nil:
			b.WriteString("null")
		case int64:
			b.WriteString("i:" + strconv.FormatInt(v, 10))
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
				// SQLite may hand back a whole REAL as an integer and
				// PostgreSQL as a float: one number either way.
				b.WriteString("i:" + strconv.FormatInt(int64(v), 10))
			} else {
				b.WriteString("f:" + strconv.FormatFloat(v, 'g', -1, 64))
			}
		case bool:
			if v {
				b.WriteString("i:1")
			} else {
				b.WriteString("i:0")
			}
		case string:
			b.WriteString("s" + strconv.Itoa(len(v)) + ":" + v)
		default:
			fmt.Fprintf(&b, "?%T:%v", v, v)
		}
		b.WriteByte(';')
	}
	return b.String()
}
