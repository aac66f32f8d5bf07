package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// database is one size's fresh database on the server, and a connection
// to the server's own database for reading its counters (a reader there
// adds nothing to the fleet database's counters).
type database struct {
	name  string
	dsn   string // the fleet's database
	admin *pgx.Conn
	// statements: pg_stat_statements is loaded and created in the fleet
	// database.
	statements bool
}

// createDatabase makes a database of its own for one size.
func createDatabase(ctx context.Context, server string) (*database, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("--postgres %q is not a postgres:// URL", server)
	}
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return nil, fmt.Errorf("--postgres: cannot connect: %v", err)
	}
	db := &database{name: fmt.Sprintf("drover_fleet_%d", rand.Int64N(1<<40)), admin: admin}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db.name); err != nil {
		admin.Close(ctx)
		return nil, fmt.Errorf("create the fleet's database (the --postgres user needs CREATEDB): %v", err)
	}
	u.Path = "/" + db.name
	db.dsn = u.String()
	if c, err := pgx.Connect(ctx, db.dsn); err == nil {
		// Created in the fleet database, readable only where the server
		// preloads the library (shared_preload_libraries).
		if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err == nil {
			var n int64
			db.statements = c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_statements").Scan(&n) == nil
		}
		c.Close(ctx)
	}
	return db, nil
}

// drop removes the database, whatever still connects to it.
func (db *database) drop() {
	ctx := context.Background()
	db.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)")
	db.admin.Close(ctx)
}

// counters are the database's cumulative figures at one moment.
type counters struct {
	xacts, rows, calls int64
	// cpuTicks: utime+stime of the database's backends by pid (nil when
	// the server's processes are not on this machine).
	cpuTicks map[int]int64
}

func (db *database) read(ctx context.Context) (counters, error) {
	var c counters
	// pg_stat_database is cached per transaction: read it in one of its own.
	if _, err := db.admin.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return c, err
	}
	if err := db.admin.QueryRow(ctx, `SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted
		FROM pg_stat_database WHERE datname = $1`, db.name).Scan(&c.xacts, &c.rows); err != nil {
		return c, fmt.Errorf("read pg_stat_database: %v", err)
	}
	if db.statements {
		if err := db.admin.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`, db.name).Scan(&c.calls); err != nil {
			db.statements = false
		}
	}
	rows, err := db.admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, db.name)
	if err != nil {
		return c, err
	}
	var pids []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids = append(pids, pid)
		}
	}
	rows.Close()
	c.cpuTicks = map[int]int64{}
	for _, pid := range pids {
		t, ok := backendTicks(pid)
		if !ok {
			c.cpuTicks = nil // not this machine's postgres (or not readable)
			break
		}
		c.cpuTicks[pid] = t
	}
	return c, nil
}

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTicks = 100

// backendTicks is utime+stime of a postgres backend on this machine.
func backendTicks(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 || !strings.Contains(s[:end], "postgres") {
		return 0, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0, false
	}
	// After the command: state is field 3, utime 14 and stime 15.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	return u + st, err1 == nil && err2 == nil
}

// cpuSeconds is the backends' CPU between a and b; false when unreadable.
// A backend that came after a counts from zero; one gone by b is lost
// (the nodes keep their connections, so few come and go).
func cpuSeconds(a, b counters) (float64, bool) {
	if a.cpuTicks == nil || b.cpuTicks == nil {
		return 0, false
	}
	var d int64
	for pid, t := range b.cpuTicks {
		d += t - a.cpuTicks[pid]
	}
	return float64(d) / clockTicks, true
}
