package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/bench/fleet"
	"github.com/drover-dev/drover/internal/store"
)

func (a *app) benchFleetCmd() *cobra.Command {
	var o fleet.Options
	var sizes []int
	c := &cobra.Command{
		Use:   "fleet",
		Short: "How many agents one PostgreSQL carries: N drover serve processes, thousands of long-running simulated agents",
		Long: `Start --nodes drover serve processes (this binary) on one PostgreSQL, each
holding its share of --sizes long-running simulated agents that print a line
every --every (the sim agent's spec.sim_every). Each size runs on a database
of its own, created on the --postgres server and dropped after.

Per size, over --window of the steady fleet: the database's statements a
second, and per running agent (pg_stat_statements calls when the server
preloads it, else pg_stat_database's transactions: the table says which),
rows written a second, and the CPU of the database's backends in cores
(their /proc/<pid>/stat when the server runs on this machine, else n/a);
the age of the stalest lease (heartbeat lag; a lease is renewed every
third of --lease); then the claim latency p50/p99 of --probes cards added
one at a time while the fleet runs (created → agent started); then one
node is SIGKILLed and the time until every one of its agents runs again
on another node is printed against lease + 10 s.

The cost curve: each figure beside its ratio to the smallest size's. Every
figure is measured in this run; compare ratios, not figures from another
machine.`,
		Example: `  drover bench fleet --postgres postgres://postgres@127.0.0.1:5432/test
  drover bench fleet --sizes 100,400 --nodes 2 --window 10s
  drover bench fleet --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Sizes = sizes
			if o.Binary == "" {
				if exe, err := os.Executable(); err == nil && !strings.HasSuffix(exe, ".test") {
					o.Binary = exe
				}
			}
			o.Progress = func(msg string) { fmt.Fprintln(a.errw, msg) }
			if err := o.Defaults().Check(); err != nil {
				return usagef("%s", strings.TrimPrefix(err.Error(), "fleet: "))
			}
			rs, err := fleet.Run(c.Context(), o)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(rs)
			}
			a.printFleetBench(o.Defaults(), rs)
			return nil
		},
	}
	c.Flags().StringVar(&o.Postgres, "postgres", os.Getenv("DROVER_TEST_POSTGRES_URL"), "the PostgreSQL server (a database per size is created there and dropped; default $DROVER_TEST_POSTGRES_URL)")
	c.Flags().IntSliceVar(&sizes, "sizes", []int{500, 1000, 2500, 5000}, "running agents in all, one measurement each, ascending")
	c.Flags().IntVar(&o.Nodes, "nodes", 5, "drover serve processes sharing the database (at least 2)")
	c.Flags().DurationVar(&o.Window, "window", 30*time.Second, "how long each steady fleet is measured")
	c.Flags().DurationVar(&o.Lease, "lease", 15*time.Second, "the nodes' dispatch.lease")
	c.Flags().DurationVar(&o.Poll, "poll", 5*time.Second, "the nodes' dispatch.poll_interval")
	c.Flags().DurationVar(&o.Every, "every", 2*time.Second, "how often each agent prints a line")
	c.Flags().IntVar(&o.Probes, "probes", 40, "cards added while the fleet runs, for the claim latency")
	c.Flags().StringVar(&o.Binary, "drover-bin", "", "the drover binary the nodes run (default: this one)")
	return c
}

func (a *app) printFleetBench(o fleet.Options, rs []fleet.Size) {
	w := a.out
	if len(rs) == 0 {
		return
	}
	b := rs[0]
	fmt.Fprintf(w, "fleet: %d drover serve processes on one PostgreSQL (%s), agents printing every %s, lease %s, poll %s; %.0fs windows\n",
		o.Nodes, store.RedactDSN(o.Postgres), o.Every, o.Lease, o.Poll, b.WindowS)
	fmt.Fprintf(w, "statements: %s; (×N) is the ratio to the %d-agent fleet\n", b.StatementSource, b.Agents)
	fmt.Fprintf(w, "  %7s %16s %18s %16s %14s %16s %16s %14s %16s\n",
		"agents", "stmts/s", "stmts/agent/s", "rows/s", "db cpu", "claim p50 ms", "claim p99 ms", "hb lag s", "recovery s")
	for _, r := range rs {
		cpu := "n/a"
		if r.DBCPUShare != nil {
			cpu = fmt.Sprintf("%.2f", *r.DBCPUShare)
			if b.DBCPUShare != nil {
				cpu += fmt.Sprintf(" (×%.1f)", fleet.Ratio(*r.DBCPUShare, *b.DBCPUShare))
			}
		}
		x := func(v, base float64, f string) string {
			return fmt.Sprintf(f+" (×%.1f)", v, fleet.Ratio(v, base))
		}
		fmt.Fprintf(w, "  %7d %16s %18s %16s %14s %16s %16s %14s %16s\n", r.Agents,
			x(r.StatementsPerS, b.StatementsPerS, "%.0f"), x(r.StatementsPerAgentS, b.StatementsPerAgentS, "%.4f"),
			x(r.RowsWrittenPerS, b.RowsWrittenPerS, "%.0f"), cpu,
			x(r.ClaimP50MS, b.ClaimP50MS, "%.0f"), x(r.ClaimP99MS, b.ClaimP99MS, "%.0f"),
			x(r.HeartbeatLagS, b.HeartbeatLagS, "%.1f"), x(r.RecoveryS, b.RecoveryS, "%.1f"))
	}
	fmt.Fprintln(w, "recovery (SIGKILL of one node; its agents running again on the others):")
	for _, r := range rs {
		verdict := "within"
		if r.RecoveryS > r.RecoveryLimitS {
			verdict = "BEYOND"
		}
		fmt.Fprintf(w, "  %7d agents: %d of %d runs back after %.1fs, %s lease + 10s = %.0fs (the last taken back after %.1fs; filled in %.1fs)\n",
			r.Agents, r.RecoveredRuns, r.KilledRuns, r.RecoveryS, verdict, r.RecoveryLimitS, r.TakenBackS, r.FillS)
	}
}
