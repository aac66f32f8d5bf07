package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// On SQLite every statement drover runs was parsed and planned afresh: the
// pure-Go driver keeps no prepared statements, and parsing was a third of
// the CPU of a dispatcher's hot path (BenchmarkBurnDown's profile). The
// store keeps the statements it runs prepared, by their text, and runs
// them through the cache, inside a transaction too (Tx.StmtContext reuses
// the statement prepared on the transaction's connection). PostgreSQL needs
// none of it: pgx caches prepared statements per connection itself.

// maxStmts bounds the cache; statements with a varying text (an IN list of
// any length) beyond it run unprepared, as before.
const maxStmts = 256

type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
	// wanted are statements first met inside a transaction: SQLite's one
	// connection is the transaction's then, so they are prepared on the
	// pool once it ends (prepareWanted).
	wanted map[string]bool
}

// prepared is the cached statement for q (nil: run it unprepared).
// inTx: the caller holds the pool's one connection in a transaction. The
// cache's lock is never held while a statement is prepared: preparing
// waits for the connection, which a transaction may hold while it looks a
// statement up.
func (d *DB) prepared(ctx context.Context, q string, inTx bool) *sql.Stmt {
	if d.dialect != sqlite {
		return nil
	}
	c := &d.stmts
	c.mu.Lock()
	st, ok := c.m[q]
	full := len(c.m)+len(c.wanted) >= maxStmts
	if !ok && !full && inTx {
		if c.wanted == nil {
			c.wanted = map[string]bool{}
		}
		c.wanted[q] = true
	}
	c.mu.Unlock()
	if ok || full || inTx {
		return st
	}
	return d.prepare(ctx, q)
}

// prepare prepares q on the pool and caches it.
func (d *DB) prepare(ctx context.Context, q string) *sql.Stmt {
	st, err := d.db.PrepareContext(ctx, q)
	if err != nil {
		return nil // the statement's own run reports the error
	}
	c := &d.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	if had, ok := c.m[q]; ok { // prepared meanwhile by another caller
		st.Close()
		return had
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = st
	return st
}

// prepareWanted prepares the statements met inside transactions, once the
// transaction gave the connection back.
func (d *DB) prepareWanted(ctx context.Context) {
	c := &d.stmts
	c.mu.Lock()
	wanted := c.wanted
	c.wanted = nil
	c.mu.Unlock()
	for q := range wanted {
		d.prepare(ctx, q)
	}
}

func (d *DB) closeStmts() {
	c := &d.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m, c.wanted = nil, nil
}

// runner runs statements through the cache, on the pool or in tx.
type runner struct {
	d  *DB
	tx *sql.Tx
}

// pool runs statements on the pool; in runs them in tx.
func (d *DB) pool() runner         { return runner{d: d} }
func (d *DB) in(tx *sql.Tx) runner { return runner{d: d, tx: tx} }
func (r runner) stmt(ctx context.Context, q string) *sql.Stmt {
	st := r.d.prepared(ctx, q, r.tx != nil)
	if st != nil && r.tx != nil {
		st = r.tx.StmtContext(ctx, st)
	}
	return st
}

func (r runner) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := r.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	if r.tx != nil {
		return r.tx.ExecContext(ctx, q, args...)
	}
	return r.d.db.ExecContext(ctx, q, args...)
}

func (r runner) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	if r.tx != nil {
		return r.tx.QueryContext(ctx, q, args...)
	}
	return r.d.db.QueryContext(ctx, q, args...)
}

func (r runner) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := r.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if r.tx != nil {
		return r.tx.QueryRowContext(ctx, q, args...)
	}
	return r.d.db.QueryRowContext(ctx, q, args...)
}
