package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// A bulk statement writes many rows of one kind with one statement: its
// rows come from a row source, a derived table of named columns that the
// statement joins (UPDATE … FROM, INSERT … SELECT).
//
// On PostgreSQL the source is unnest of one text[] parameter per column,
// cast to the column's type: the statement's text is the same for any
// number of rows, so pgx prepares it once per connection, and the whole
// source is one round trip whatever its size. On SQLite it is a VALUES list
// of bound parameters, in chunks of a few fixed sizes (sqliteChunks).

// bulkCols names a row source's columns; a column named "name:bigint" or
// "name:float8" has that PostgreSQL type (text otherwise). SQLite keeps
// whatever was bound.
type bulkCols []string

// sqliteVars is SQLite's limit on bound parameters per statement.
const sqliteVars = 32766

func (c bulkCols) names() []string {
	out := make([]string, len(c))
	for i, n := range c {
		out[i], _, _ = strings.Cut(n, ":")
	}
	return out
}

// source is the row source for n rows of c, as a parenthesised derived
// table (the caller names it), and its arguments from rows.
func (d *DB) source(c bulkCols, rows [][]any) (string, []any) {
	names := c.names()
	var b strings.Builder
	b.WriteString("(SELECT ")
	if d.dialect == postgres {
		for i, n := range c {
			name, typ, _ := strings.Cut(n, ":")
			if i > 0 {
				b.WriteString(", ")
			}
			if typ == "" {
				b.WriteString("u." + name)
			} else {
				fmt.Fprintf(&b, "u.%s::%s AS %s", name, typ, name)
			}
		}
		b.WriteString(" FROM unnest(")
		b.WriteString(strings.TrimSuffix(strings.Repeat("?::text[],", len(c)), ","))
		b.WriteString(") AS u(" + strings.Join(names, ", ") + "))")
		args := make([]any, len(c))
		for j := range c {
			col := make([]*string, len(rows))
			for i, r := range rows {
				col[i] = pgText(r[j])
			}
			args[j] = col
		}
		return b.String(), args
	}
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "column%d AS %s", i+1, name)
	}
	b.WriteString(" FROM (VALUES ")
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(c)), ",") + ")"
	args := make([]any, 0, len(rows)*len(c))
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
		args = append(args, r...)
	}
	b.WriteString("))")
	return b.String(), args
}

// pgText is v as the text PostgreSQL casts back to v's column type; nil is
// NULL.
func pgText(v any) *string {
	var s string
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		s = x
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		s = "0"
		if x {
			s = "1"
		}
	default:
		panic(fmt.Sprintf("sqlstore: no bulk text for %T", v))
	}
	return &s
}

// sqliteChunks are the row counts of SQLite's bulk statements: a batch is
// cut greedily into chunks of these sizes (200 rows: 128+32+32+8), so each
// kind of statement has a handful of texts, kept prepared like any other
// statement (parsing a fresh VALUES list was half the fast path's CPU).
// 128 rows of the widest kind (26 columns) stay far below SQLite's limit of
// sqliteVars parameters.
var sqliteChunks = []int{128, 32, 8, 2, 1}

// bulk runs stmt (given the row source of a chunk) for all rows, in chunks
// on SQLite, and returns how many rows the statements returned (their
// RETURNING) or affected (returning false).
func (d *DB) bulk(ctx context.Context, tx *sql.Tx, c bulkCols, rows [][]any, returning bool, stmt func(src string) string) (int, error) {
	x := d.in(tx)
	total := 0
	for len(rows) > 0 {
		size := len(rows)
		if d.dialect == sqlite {
			for _, n := range sqliteChunks {
				if n <= size && n*len(c) <= sqliteVars {
					size = n
					break
				}
			}
		}
		part := rows[:size]
		rows = rows[size:]
		src, args := d.source(c, part)
		q := d.q(stmt(src))
		if !returning {
			res, err := x.ExecContext(ctx, q, args...)
			if err != nil {
				return 0, err
			}
			n, _ := res.RowsAffected()
			total += int(n)
			continue
		}
		rs, err := x.QueryContext(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		for rs.Next() {
			total++
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return 0, err
		}
	}
	return total, nil
}
