// Package fleet measures what one PostgreSQL carries: N `drover serve`
// processes (the drover binary itself) on one fresh database, each holding
// M long-running simulated agents that print progress, at several sizes.
// Per size it reads the database's own counters (pg_stat_statements when
// the server has it loaded, else pg_stat_database's transactions), the CPU
// of the database's backends where they run on this machine, the claim
// latency of cards added while the fleet runs, the age of the oldest lease
// (heartbeat lag), and the time until the runs of a SIGKILLed node run on
// the other nodes. Every figure is measured in the call that returns it;
// the cost curve is each figure's ratio to the smallest size's.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Options says what Run measures.
type Options struct {
	// Postgres is the URL of a PostgreSQL server; each size runs on a
	// database of its own created there (and dropped after).
	Postgres string
	// Binary is the drover binary the nodes run (drover serve).
	Binary string
	// Sizes are the total running agents, one measurement each, ascending.
	Sizes []int
	// Nodes is how many drover serve processes share the database (≥ 2:
	// one is killed for the recovery figure).
	Nodes int
	// Window is how long the steady fleet is measured.
	Window time.Duration
	// Lease is the nodes' dispatch.lease (a heartbeat every third of it).
	Lease time.Duration
	// Poll is the nodes' dispatch.poll_interval.
	Poll time.Duration
	// Every is how often each agent prints a line (spec.sim_every).
	Every time.Duration
	// Probes is how many cards are added while the fleet runs, for the
	// claim latency.
	Probes int
	// Dir holds the nodes' directories ("" = the system's temp dir).
	Dir string
	// Progress, when set, is told what the run is doing.
	Progress func(string)
}

// Defaults fills the zero fields with the defaults of drover bench fleet.
func (o Options) Defaults() Options {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{500, 1000, 2500, 5000}
	}
	if o.Nodes == 0 {
		o.Nodes = 5
	}
	if o.Window == 0 {
		o.Window = 30 * time.Second
	}
	if o.Lease == 0 {
		o.Lease = 15 * time.Second
	}
	if o.Poll == 0 {
		o.Poll = 5 * time.Second
	}
	if o.Every == 0 {
		o.Every = 2 * time.Second
	}
	if o.Probes == 0 {
		o.Probes = 40
	}
	return o
}

// Check names the first option that cannot be run, and its fix.
func (o Options) Check() error {
	switch {
	case o.Postgres == "":
		return errors.New("fleet: --postgres is required (a PostgreSQL URL such as postgres://postgres@127.0.0.1:5432/test; default $DROVER_TEST_POSTGRES_URL)")
	case o.Binary == "":
		return errors.New("fleet: no drover binary to run as the nodes (--drover-bin PATH)")
	case o.Nodes < 2:
		return fmt.Errorf("fleet: --nodes must be at least 2, one is killed for the recovery figure (got %d)", o.Nodes)
	case o.Window <= 0 || o.Lease <= 0 || o.Poll <= 0 || o.Every <= 0:
		return errors.New("fleet: --window, --lease, --poll and --every must be positive durations")
	case o.Probes <= 0:
		return fmt.Errorf("fleet: --probes must be positive (got %d)", o.Probes)
	}
	for i, n := range o.Sizes {
		if n < o.Nodes {
			return fmt.Errorf("fleet: --sizes %d is fewer agents than --nodes %d; give each node one at least", n, o.Nodes)
		}
		if i > 0 && n <= o.Sizes[i-1] {
			return fmt.Errorf("fleet: --sizes must ascend (%d after %d)", n, o.Sizes[i-1])
		}
	}
	return nil
}

// Size is the measurement of one fleet size.
type Size struct {
	Agents  int `json:"agents"`
	Nodes   int `json:"nodes"`
	PerNode int `json:"per_node"`
	// FillS is how long the nodes took from the cards' creation until
	// every agent ran.
	FillS   float64 `json:"fill_s"`
	WindowS float64 `json:"window_s"`
	// StatementsPerS is the database's statements a second over the
	// window (pg_stat_statements calls; else transactions, commits and
	// rollbacks of pg_stat_database, each one statement or more), the
	// benchmark's own excluded; StatementSource says which.
	StatementsPerS      float64 `json:"statements_per_s"`
	StatementsPerAgentS float64 `json:"statements_per_agent_s"`
	StatementSource     string  `json:"statement_source"`
	TransactionsPerS    float64 `json:"transactions_per_s"`
	// RowsWrittenPerS: rows inserted, updated and deleted a second.
	RowsWrittenPerS float64 `json:"rows_written_per_s"`
	// DBCPUShare is the database backends' CPU over the window, in cores
	// (null when the server's processes are not readable here).
	DBCPUShare *float64 `json:"db_cpu_cores"`
	// Claim latency of the probe cards: created → agent started.
	Probes     int     `json:"probes"`
	ClaimP50MS float64 `json:"claim_p50_ms"`
	ClaimP99MS float64 `json:"claim_p99_ms"`
	// HeartbeatLagS is the largest age of a lease seen over the window:
	// how long ago the stalest running card's lease was renewed.
	HeartbeatLagS float64 `json:"heartbeat_lag_s"`
	LeaseS        float64 `json:"lease_s"`
	// Recovery: the killed node's running agents, and the time from the
	// SIGKILL until the last of them ran on another node, beside the
	// bound lease + 10 s; TakenBackS until the last of the killed node's
	// runs was taken back (routed as interrupted, its card eligible
	// again), the part of the recovery before the restarts.
	RecoveredRuns  int     `json:"recovered_runs"`
	KilledRuns     int     `json:"killed_runs"`
	RecoveryS      float64 `json:"recovery_s"`
	TakenBackS     float64 `json:"taken_back_s"`
	RecoveryLimitS float64 `json:"recovery_limit_s"`
}

// Run measures every size of o in turn, each on a database of its own.
func Run(ctx context.Context, o Options) ([]Size, error) {
	o = o.Defaults()
	if err := o.Check(); err != nil {
		return nil, err
	}
	var out []Size
	for _, n := range o.Sizes {
		s, err := measure(ctx, o, n)
		if err != nil {
			return out, fmt.Errorf("fleet of %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func (o Options) say(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// percentileMS is the nearest-rank percentile p (0..1] of ds, in ms.
func percentileMS(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	i := int(float64(len(s))*p+0.999999) - 1
	return float64(s[max(0, min(i, len(s)-1))]) / float64(time.Millisecond)
}

// Ratio is a's figure over the base figure (0 when the base is 0).
func Ratio(a, base float64) float64 {
	if base == 0 {
		return 0
	}
	return a / base
}
