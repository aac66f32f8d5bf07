package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// longSpec scripts a fleet agent: it runs far longer than the benchmark,
// printing a line every o.Every; probeSpec: a card that succeeds at once.
const (
	longSpec  = `{"sim": ["succeeded"], "sim_delay": "24h", "sim_every": %q, "sim_cost_usd": 0}`
	probeSpec = `{"sim": ["succeeded"], "sim_delay": "0s", "sim_cost_usd": 0}`
)

// measure runs one size: total agents over o.Nodes nodes.
func measure(ctx context.Context, o Options, total int) (Size, error) {
	per := total / o.Nodes
	s := Size{Agents: per * o.Nodes, Nodes: o.Nodes, PerNode: per, LeaseS: o.Lease.Seconds(),
		RecoveryLimitS: (o.Lease + 10*time.Second).Seconds()}
	o.say("fleet %d: creating a database on %s", s.Agents, o.Postgres)
	db, err := createDatabase(ctx, o.Postgres)
	if err != nil {
		return s, err
	}
	defer db.drop()
	s.StatementSource = "pg_stat_database transactions"
	if db.statements {
		s.StatementSource = "pg_stat_statements calls"
	}
	st, err := sqlstore.Open(ctx, db.dsn) // creates the schema before any node opens it
	if err != nil {
		return s, err
	}
	defer st.Close()
	conn, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		return s, err
	}
	defer conn.Close(context.Background())
	dir, err := os.MkdirTemp(o.Dir, "drover-fleet-")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(dir)

	var nodes []*node
	defer func() {
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Add(1)
			go func() { defer wg.Done(); n.stop(2 * time.Minute) }()
		}
		wg.Wait()
	}()
	for i := range o.Nodes {
		name := fmt.Sprintf("fleet-%d", i+1)
		n, err := startNode(o, filepath.Join(dir, name), name, db.dsn, per)
		if err != nil {
			return s, err
		}
		nodes = append(nodes, n)
	}
	alive := func() error {
		for _, n := range nodes {
			if !n.alive() && n != nodes[0] {
				return n.errExited()
			}
		}
		return nil
	}

	// Fill: every node takes its per agents (max_concurrent per).
	o.say("fleet %d: %d nodes started; creating %d long-running cards", s.Agents, o.Nodes, s.Agents)
	start := time.Now()
	if err := createCards(ctx, st, s.Agents, fmt.Sprintf(longSpec, o.Every.String()), "fleet"); err != nil {
		return s, err
	}
	limit := 2*time.Minute + time.Duration(s.Agents)*20*time.Millisecond
	for last := time.Now(); ; {
		var running int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM runs WHERE outcome = '' AND started_at IS NOT NULL`).Scan(&running); err != nil {
			return s, err
		}
		if running >= s.Agents {
			break
		}
		if err := alive(); err != nil {
			return s, err
		}
		if time.Since(start) > limit {
			return s, fmt.Errorf("%d of %d agents running after %s", running, s.Agents, limit)
		}
		if time.Since(last) >= 5*time.Second {
			o.say("fleet %d: %d of %d agents running", s.Agents, running, s.Agents)
			last = time.Now()
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return s, err
		}
	}
	s.FillS = time.Since(start).Seconds()

	// Room for the probes and for the killed node's runs on the others.
	room := per + (per+o.Nodes-2)/(o.Nodes-1) + o.Probes
	for _, n := range nodes {
		if err := n.setSlots(room); err != nil {
			return s, err
		}
	}
	o.say("fleet %d: all running after %.1fs; settling for %s", s.Agents, s.FillS, o.Lease/3+2*time.Second)
	if err := sleep(ctx, o.Lease/3+2*time.Second); err != nil {
		return s, err
	}

	if err := window(ctx, o, db, conn, &s); err != nil {
		return s, err
	}
	if err := alive(); err != nil {
		return s, err
	}
	if err := probe(ctx, o, st, conn, &s); err != nil {
		return s, err
	}
	if err := recovery(ctx, o, conn, nodes[0], &s); err != nil {
		return s, err
	}
	o.say("fleet %d: stopping the nodes", s.Agents)
	return s, alive()
}

// window measures the steady fleet for o.Window: the database's counters,
// its backends' CPU and, each second, the oldest lease's age.
func window(ctx context.Context, o Options, db *database, conn *pgx.Conn, s *Size) error {
	o.say("fleet %d: measuring for %s", s.Agents, o.Window)
	a, err := db.read(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	own := 0 // the benchmark's own statements on the fleet database
	lease := o.Lease.Milliseconds()
	for time.Since(t0) < o.Window {
		if err := sleep(ctx, min(time.Second, o.Window-time.Since(t0))); err != nil {
			return err
		}
		var oldest *int64
		own++
		if err := conn.QueryRow(ctx, `SELECT min(claim_lease_until) FROM cards WHERE claim_owner IS NOT NULL`).Scan(&oldest); err != nil {
			return err
		}
		if oldest != nil {
			age := float64(time.Now().UnixMilli()-(*oldest-lease)) / 1000
			s.HeartbeatLagS = max(s.HeartbeatLagS, age)
		}
	}
	b, err := db.read(ctx)
	if err != nil {
		return err
	}
	wall := time.Since(t0).Seconds()
	s.WindowS = wall
	s.TransactionsPerS = float64(b.xacts-a.xacts-int64(own)) / wall
	s.StatementsPerS = s.TransactionsPerS
	if db.statements {
		s.StatementsPerS = float64(b.calls-a.calls-int64(own)) / wall
	}
	s.StatementsPerAgentS = s.StatementsPerS / float64(s.Agents)
	s.RowsWrittenPerS = float64(b.rows-a.rows) / wall
	if cpu, ok := cpuSeconds(a, b); ok {
		cores := cpu / wall
		s.DBCPUShare = &cores
	}
	return nil
}

// probe adds o.Probes cards one at a time while the fleet runs and times
// each from its creation to its agent's start.
func probe(ctx context.Context, o Options, st *sqlstore.DB, conn *pgx.Conn, s *Size) error {
	o.say("fleet %d: adding %d cards while it runs", s.Agents, o.Probes)
	var ids []string
	for i := range o.Probes {
		c, err := st.CreateCard(ctx, "PRB", board.Card{Title: fmt.Sprint("probe ", i), State: "ready", Spec: []byte(probeSpec)}, "bench")
		if err != nil {
			return err
		}
		ids = append(ids, c.ID)
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(time.Minute + 2*o.Poll)
	for {
		rows, err := conn.Query(ctx, `SELECT min(r.started_at) - c.created_at FROM cards c JOIN runs r ON r.card_id = c.id
			WHERE c.id = ANY($1) AND r.started_at IS NOT NULL GROUP BY c.id, c.created_at`, ids)
		if err != nil {
			return err
		}
		var lat []time.Duration
		for rows.Next() {
			var ms int64
			if rows.Scan(&ms) == nil {
				lat = append(lat, time.Duration(ms)*time.Millisecond)
			}
		}
		rows.Close()
		if len(lat) == len(ids) {
			s.Probes, s.ClaimP50MS, s.ClaimP99MS = len(lat), percentileMS(lat, 0.5), percentileMS(lat, 0.99)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d probe cards started within a minute and two poll intervals", len(lat), len(ids))
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// recovery SIGKILLs victim and times until each of its running cards has
// an agent started on another node.
func recovery(ctx context.Context, o Options, conn *pgx.Conn, victim *node, s *Size) error {
	var ids []string
	rows, err := conn.Query(ctx, `SELECT id FROM cards WHERE claim_owner = $1`, victim.name)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	if len(ids) == 0 {
		return errors.New("the node to kill runs no agent")
	}
	s.KilledRuns = len(ids)
	o.say("fleet %d: SIGKILL %s with %d agents; waiting for them on the others (lease %s)", s.Agents, victim.name, len(ids), o.Lease)
	victim.kill()
	t0 := time.Now()
	deadline := t0.Add(o.Lease + time.Minute)
	for last := t0; ; {
		var n int
		var latest *int64
		if err := conn.QueryRow(ctx, `SELECT count(DISTINCT card_id), max(started_at) FROM runs
			WHERE card_id = ANY($1) AND node <> $2 AND started_at >= $3`, ids, victim.name, t0.UnixMilli()).Scan(&n, &latest); err != nil {
			return err
		}
		s.RecoveredRuns = n
		if latest != nil {
			s.RecoveryS = float64(*latest-t0.UnixMilli()) / 1000
		}
		var back int
		var backAt *int64
		if err := conn.QueryRow(ctx, `SELECT count(*), max(finished_at) FROM runs
			WHERE card_id = ANY($1) AND node = $2 AND finished_at >= $3`, ids, victim.name, t0.UnixMilli()).Scan(&back, &backAt); err != nil {
			return err
		}
		if backAt != nil {
			s.TakenBackS = float64(*backAt-t0.UnixMilli()) / 1000
		}
		if n == len(ids) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of the killed node's %d runs back on other nodes within the lease and a minute", n, len(ids))
		}
		if time.Since(last) >= 5*time.Second {
			o.say("fleet %d: %d of %d taken back, %d running again after %.0fs", s.Agents, back, len(ids), n, time.Since(t0).Seconds())
			last = time.Now()
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// createCards creates n cards of spec, from a few writers at once.
func createCards(ctx context.Context, st *sqlstore.DB, n int, spec, title string) error {
	const writers = 4
	errs := make(chan error, writers)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range writers {
		go func() {
			for i := range next {
				if _, err := st.CreateCard(ctx, "FLT", board.Card{Title: fmt.Sprint(title, " ", i), State: "ready", Spec: []byte(spec)}, "bench"); err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range writers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
