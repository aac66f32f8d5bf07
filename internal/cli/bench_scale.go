package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/bench"
	"github.com/drover-dev/drover/internal/store"
)

// benchScaleHelp lists the scale scenarios in drover bench --help.
const benchScaleHelp = `
Scale (each on a scratch store: --backend sqlite, a temp file, or --backend
postgres with --dsn, a scratch schema dropped after):
  board     a board of N cards (a fifth ready): the median and slowest of 5
            of drover status, the dashboard's board page (GET /) and a new
            dispatcher's first tick. Default --cards 100000.
  recover   N runs left open by a node that died, their leases expired; the
            node restarts: the time until every run is routed as
            interrupted. Default --cards 1000.
  supervise --agents N command-kind agents (real child processes, each a
            shell loop printing a line a second) under one dispatcher: the
            drover process's CPU share of a core and its memory over
            --window once all run, the CPU each start cost, and the node
            supervisor's CPU and memory beside it. Default --agents 500
            --window 1m. (Cards for claim latency: see wakeup.)`

func (a *app) benchScale(c *cobra.Command, scenario string, f benchFlags) error {
	ctx := c.Context()
	backends, err := a.benchBackends(f, false)
	if err != nil {
		return err
	}
	if len(backends) != 1 {
		return usagef("%s runs on one --backend (got %s)", scenario, strings.Join(f.backends, ","))
	}
	b := backends[0]
	where := "a scratch SQLite store"
	if b.Name == "postgres" {
		where = "a scratch schema in " + store.RedactDSN(b.DSN)
	}
	n := func(def int) int {
		if f.cards > 0 {
			return f.cards
		}
		return def
	}
	w := a.out
	switch scenario {
	case "board":
		bs, err := bench.MeasureBoard(ctx, "", b.DSN, n(100_000))
		if err != nil {
			return err
		}
		if a.asJSON {
			return a.printScenario(scenario, bs)
		}
		fmt.Fprintf(w, "board: %d cards on %s (created in %.1fs), %d samples each\n", bs.Cards, where, bs.SeedS, bs.Samples)
		fmt.Fprintf(w, "  %-10s %10s %10s\n", "", "p50 ms", "max ms")
		for _, op := range bs.Ops {
			fmt.Fprintf(w, "  %-10s %10.1f %10.1f  %s", op.Name, op.P50MS, op.MaxMS, op.What)
			if op.Detail != "" {
				fmt.Fprintf(w, " (%s)", op.Detail)
			}
			fmt.Fprintln(w)
		}
	case "recover":
		rs, err := bench.MeasureRecover(ctx, "", b.DSN, n(1000))
		if err != nil {
			return err
		}
		if a.asJSON {
			return a.printScenario(scenario, rs)
		}
		fmt.Fprintf(w, "recover: %d open runs with expired leases on %s; their node restarts\n", rs.Runs, where)
		fmt.Fprintf(w, "  all routed     %10.0fms  %.0f runs/s, %.2fms a run\n", rs.WallMS, rs.RunsPerS, rs.PerRunMS)
		fmt.Fprintf(w, "  first routed   %10.0fms  after the dispatcher's start\n", rs.FirstMS)
	case "supervise":
		if f.agents <= 0 {
			return usagef("--agents must be positive (got %d)", f.agents)
		}
		if f.window <= 0 {
			return usagef("--window must be positive (got %s)", f.window)
		}
		ss, err := bench.MeasureSupervise(ctx, "", b.DSN, f.agents, f.window)
		if err != nil {
			return err
		}
		if a.asJSON {
			return a.printScenario(scenario, ss)
		}
		fmt.Fprintf(w, "supervise: %d agents printing a line a second on %s, sampled over %.0fs\n", ss.Agents, where, ss.WindowS)
		fmt.Fprintf(w, "  drover CPU     %9.1f%% of a core\n", 100*ss.CPUShare)
		fmt.Fprintf(w, "  drover RSS     %9.0f MB  (max %.0f MB)\n", ss.RSSMB, ss.MaxRSSMB)
		fmt.Fprintf(w, "  ramp           %9.1f s   %.1f ms of drover CPU per agent started\n", ss.RampS, ss.StartCPUMSPerAgent)
		fmt.Fprintf(w, "  supervisors    %9d     %.1f%% of a core, %.0f MB PSS together\n", ss.Supervisors, 100*ss.SupervisorCPUShare, ss.SupervisorPSSMB)
	}
	return nil
}
