package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/bench"
	"github.com/drover-dev/drover/internal/store"
)

func (a *app) benchRunCmd() *cobra.Command {
	var o bench.RunCostOptions
	var f benchFlags
	c := &cobra.Command{
		Use:   "run",
		Short: "What a run costs drover: eligible → exec, exit → committed, CPU per run, and 2,000 supervised agents",
		Long: `Measure what a run of a real command agent costs drover, on a scratch store
(--backend sqlite, a temp file; --backend postgres with --dsn, a scratch
schema dropped after), with the issue's targets beside the figures.

Starts: --starts cards (each a /bin/sh script that writes its start time,
sleeps a second and writes its end time) are made ready in one commit on
an idle dispatcher with as many slots. Per run: eligible (the store's time
of that move) → claimed, → exec (drover learns that the agent's process
runs: its execve succeeded), → the script's first command (the agent's own
start-up included: the shell and one more fork, under K others), and the
script's last command → the commit of the card's new state, p50/p99; the
same for the floor (the same scripts started by exec.Cmd alone); the
CPU per run of the drover process and of its node supervisor
(/proc/<pid>/stat utime+stime, children excluded).

Supervise: --agents agents printing a line a second under one dispatcher,
sampled over --window once all run: drover's and the supervisor's CPU share
of a core, separately and together, and their resident memory (VmRSS, the
agents not counted), in all and per running agent.

Raises RLIMIT_NOFILE and RLIMIT_NPROC as far as the hard limits allow, or
fails naming the limit. Progress lines go to stderr. The supervisor is this
binary re-executed; only the drover binary runs one.`,
		Example: `  drover bench run
  drover bench run --starts 20 --agents 200 --window 20s
  drover bench run --backend postgres --dsn postgres://postgres@127.0.0.1:5432/test --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return usagef("%s", err.Error())
			}
			backends, err := a.benchBackends(f, false)
			if err != nil {
				return err
			}
			if len(backends) != 1 {
				return usagef("run runs on one --backend (got %s)", strings.Join(f.backends, ","))
			}
			if f.cpuProfile != "" {
				// Fail before measuring, not after.
				stop, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				stop()
				o.OnWindow = func() func() {
					stop, err := startCPUProfile(f.cpuProfile)
					if err != nil {
						fmt.Fprintln(a.errw, err)
						return func() {}
					}
					return stop
				}
			}
			o.Store = backends[0].DSN
			o.Progress = func(msg string) { fmt.Fprintln(a.errw, msg) }
			rc, err := bench.MeasureRunCost(c.Context(), o)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(rc)
			}
			where := "a scratch SQLite store"
			if rc.Backend == "postgres" {
				where = "a scratch schema in " + store.RedactDSN(backends[0].DSN)
			}
			a.printRunCost(rc, where)
			return nil
		},
	}
	c.Flags().IntVar(&o.Starts, "starts", 100, "cards made ready at once (the dispatcher has as many slots)")
	c.Flags().IntVar(&o.Agents, "agents", 2000, "agents supervised at once, each printing a line a second")
	c.Flags().DurationVar(&o.Window, "window", time.Minute, "how long the supervised agents are sampled once all run")
	c.Flags().StringSliceVar(&f.backends, "backend", nil, "sqlite or postgres; default postgres when --dsn (or a PostgreSQL --store) is set, else sqlite")
	c.Flags().StringVar(&f.dsn, "dsn", "", "the PostgreSQL database for --backend postgres (a scratch schema in it, dropped after)")
	c.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write this process's CPU profile over the supervision window (the dispatcher's) to FILE (go tool pprof FILE)")
	return c
}

func (a *app) printRunCost(rc bench.RunCost, where string) {
	w := a.out
	s, v := rc.Starts, rc.Supervise
	fmt.Fprintf(w, "run: real command agents on %s\n", where)
	fmt.Fprintf(w, "starts: %d cards ready in one commit, all run at once (%.1fs to the last routing)\n", s.Runs, s.WallS)
	fmt.Fprintf(w, "  %-34s %10s %10s\n", "", "p50 ms", "p99 ms")
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "eligible → claimed", s.EligibleToClaimP50MS, s.EligibleToClaimP99MS)
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "eligible → started event", s.EligibleToStartedP50MS, s.EligibleToStartedP99MS)
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "eligible → exec (the process runs)", s.EligibleToExecP50MS, s.EligibleToExecP99MS)
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "eligible → script's first command", s.EligibleToScriptP50MS, s.EligibleToScriptP99MS)
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "exit (script's end) → committed", s.ExitToCommitP50MS, s.ExitToCommitP99MS)
	fl := rc.Floor
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f  (floor: the same %d scripts started at once by exec.Cmd, no drover)\n", "floor: start → exec", fl.StartToExecP50MS, fl.StartToExecP99MS, fl.Runs)
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "floor: start → script's first command", fl.StartToScriptP50MS, fl.StartToScriptP99MS)
	fmt.Fprintf(w, "  %-34s %10.1f %10.1f\n", "floor: exit → reaped", fl.ExitToReapedP50MS, fl.ExitToReapedP99MS)
	fmt.Fprintf(w, "  eligible → exec p99 / floor p99: %.2f×\n", fl.ExecP99OverFloor)
	fmt.Fprintf(w, "  CPU per run: drover %.1f ms, supervisor %.1f ms, together %.1f ms (%d supervisor)\n",
		s.DroverCPUMSPerRun, s.SupervisorCPUMSPerRun, s.TotalCPUMSPerRun, s.Supervisors)
	fmt.Fprintf(w, "supervise: %d agents printing a line a second, sampled over %.0fs (all running after %.1fs)\n", v.Agents, v.WindowS, v.RampS)
	fmt.Fprintf(w, "  %-12s %14s %10s\n", "", "CPU of a core", "RSS MB")
	fmt.Fprintf(w, "  %-12s %13.1f%% %10.0f\n", "drover", 100*v.CPUShare, v.RSSMB)
	fmt.Fprintf(w, "  %-12s %13.1f%% %10.0f\n", "supervisor", 100*v.SupervisorCPUShare, v.SupervisorRSSMB)
	fmt.Fprintf(w, "  %-12s %13.1f%% %10.0f  (%.0f KB per running agent)\n", "together", 100*v.TotalCPUShare, v.TotalRSSMB, v.RSSPerAgentKB)
	fmt.Fprintln(w, "targets (issue 26):")
	for _, t := range rc.Targets {
		verdict := "PASS"
		if !t.Pass {
			verdict = "MISS"
		}
		fmt.Fprintf(w, "  %-4s %-58s %9.1f %s (target < %g)\n", verdict, t.Name, t.Measured, t.Unit, t.Limit)
	}
}
