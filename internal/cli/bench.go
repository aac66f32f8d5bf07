package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/bench"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// benchWakePoll is the poll interval of the wakeup scenario's dispatcher:
// long enough that only a wake-up can explain a fast claim.
const benchWakePoll = 30 * time.Second

// benchFlags are the flags of drover bench; each scenario reads its own.
type benchFlags struct {
	cards, events, nodes, rounds         int
	slots                                []int
	backends                             []string
	dsn, riverBin, droverBin, cpuProfile string
	agents                               int
	window                               time.Duration
}

func (a *app) benchCmd() *cobra.Command {
	var f benchFlags
	c := &cobra.Command{
		Use:   "bench SCENARIO",
		Short: "Measure drover on this machine, and beside River (scenarios: " + strings.Join(bench.Scenarios, ", ") + ")",
		Long: `Measure drover on this machine. Every number is measured in this run and is
shown beside a ratio to a reference from the same run (or to the configured
poll interval), never against figures from elsewhere.

Scenarios:
  store     create N cards with CreateCard, then list one page (100) of one
            state in board order, with the index and with indexes forbidden:
            ops/s of each and the index's speedup. Runs on the configured
            store's backend, in a scratch copy (SQLite: a new file beside the
            store; PostgreSQL: a new schema, dropped after): your board is not
            touched. Default --cards 5000.
  wakeup    a dispatcher on a scratch SQLite store with poll_interval 30s;
            N cards created by another drover process (drover card add;
            timed from the card's created_at), N by another store handle in
            this process and N by the dispatcher's own: the time to their
            claim (mean, p50, p99, max) and its fraction of the poll
            interval. Default --cards 20.
  dispatch  N sim cards that succeed at once through --nodes dispatchers
            with --slots K each on a scratch store (--backend sqlite: a temp
            file; --backend postgres: a scratch schema in --dsn's database,
            dropped after): cards/s, and wall time against the ideal
            N/(K×nodes) × the per-card time measured in the run.
            Default --cards 200.
  compare   River (bench/river: River's own benchmark settings, and its
            defaults with 100 workers) and drover's dispatch burn down the
            same N no-op jobs on each --backend, interleaved, --rounds
            times: each figure's median and spread, and drover/River. River
            is a reference measurement, not a target (drover's jobs are
            agent runs of minutes). Builds bench/river from this checkout
            unless --river-bin is given.
            Default --cards 10000 --rounds 3 --slots 100,2000.
  history   the same board (N cards, a fifth ready) on two scratch stores of
            the configured backend, one fresh and one with --events events
            over the past year and ten finished runs per card: the median
            time of status, the dashboard's reads, card show and a claim on
            each, and their ratio (about 1: a long history costs nothing).
            Default --cards 1000 --events 10000000.
` + benchScaleHelp + `

Subcommands with flags of their own (drover bench policy --help, drover bench fleet --help,
drover bench run --help):
  run       what a run of a real command agent costs drover: eligible →
            exec and exit → committed p50/p99 at --starts concurrent
            starts, CPU per run of drover and its node supervisor, and
            --agents supervised agents' CPU share and memory, beside the
            issue's targets (PASS/MISS).
  policy    the incidents drover's failure policy answers, on a fake clock,
            through drover's real dispatcher and models of its peers'
            documented policies: runs, dollars, time to a truthful state,
            cards finished without a human, human actions.
  fleet     N drover serve processes on one PostgreSQL, each with M
            long-running simulated agents that print: statements per
            running agent, database CPU, claim latency, heartbeat lag and
            a killed node's recovery, at several sizes (drover bench fleet
            --help).`,
		Example: `  drover bench store --cards 10000
  drover bench wakeup --json
  drover bench dispatch --cards 500 --slots 8
  drover bench dispatch --backend postgres --dsn postgres://postgres@127.0.0.1:5432/test --nodes 3
  drover bench compare --backend sqlite,postgres --dsn postgres://postgres@127.0.0.1:5432/test --rounds 5
  drover bench history --events 1000000 --json
  drover bench board --cards 100000
  drover bench supervise --agents 500 --window 1m
  drover bench policy`,
		Args: func(c *cobra.Command, args []string) error {
			valid := strings.Join(bench.Scenarios, ", ")
			if len(args) != 1 {
				return usagef("%s takes one SCENARIO (%s); see %s --help", c.CommandPath(), valid, c.CommandPath())
			}
			for _, s := range bench.Scenarios {
				if args[0] == s {
					return nil
				}
			}
			return usagef("unknown bench scenario %q; valid scenarios: %s", args[0], valid)
		},
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("cards") && f.cards <= 0 {
				return usagef("--cards must be positive (got %d)", f.cards)
			}
			for _, n := range f.slots {
				if n <= 0 {
					return usagef("--slots must be positive (got %d)", n)
				}
			}
			if f.nodes <= 0 {
				return usagef("--nodes must be positive (got %d)", f.nodes)
			}
			if f.rounds <= 0 {
				return usagef("--rounds must be positive (got %d)", f.rounds)
			}
			if f.cpuProfile != "" {
				stop, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			n := func(def int) int {
				if f.cards > 0 {
					return f.cards
				}
				return def
			}
			slots := func(def ...int) []int {
				if len(f.slots) > 0 {
					return f.slots
				}
				return def
			}
			switch args[0] {
			case "store":
				return a.benchStore(c, n(5000))
			case "wakeup":
				return a.benchWakeup(c, n(20), f.droverBin)
			case "history":
				if f.events <= 0 {
					return usagef("--events must be positive (got %d)", f.events)
				}
				if n(1000) < 200 {
					return usagef("history needs --cards 200 or more (a fifth are claimed while measuring)")
				}
				return a.benchHistory(c, n(1000), f.events)
			case "compare":
				backends, err := a.benchBackends(f, true)
				if err != nil {
					return err
				}
				return a.benchCompare(c, backends, n(10000), slots(100, 2000), f.rounds, f.riverBin)
			case "dispatch":
				backends, err := a.benchBackends(f, false)
				if err != nil {
					return err
				}
				if len(backends) != 1 {
					return usagef("dispatch runs on one --backend (got %s); compare runs several", strings.Join(f.backends, ","))
				}
				if s := slots(4); len(s) != 1 {
					return usagef("dispatch runs one --slots setting (got %v); compare runs several", s)
				}
				return a.benchDispatch(c, backends[0], n(200), slots(4)[0], f.nodes)
			default:
				return a.benchScale(c, args[0], f)
			}
		},
	}
	c.AddCommand(a.benchPolicyCmd())
	c.AddCommand(a.benchFleetCmd())
	c.AddCommand(a.benchRunCmd())
	c.Flags().IntVar(&f.cards, "cards", 0, "number of cards (default per scenario: store 5000, wakeup 20 per path, dispatch 200, compare 10000, board 100000, recover 1000)")
	c.Flags().IntSliceVar(&f.slots, "slots", nil, "dispatch, compare: agent slots (max_concurrent) of each dispatcher (default dispatch 4; compare 100,2000: a figure for each, beside River's default 100 workers and its benchmark's 2,000)")
	c.Flags().IntVar(&f.events, "events", 10_000_000, "history: events in the long store")
	c.Flags().IntVar(&f.nodes, "nodes", 1, "dispatch: dispatchers sharing the store, each with its own store handle and node name")
	c.Flags().IntVar(&f.rounds, "rounds", 3, "compare: rounds of interleaved measurements")
	c.Flags().StringSliceVar(&f.backends, "backend", nil, "dispatch, compare, board, recover, supervise: sqlite or postgres (compare: a list); default postgres when --dsn (or a PostgreSQL --store) is set, else sqlite; compare: sqlite, and postgres too then")
	c.Flags().StringVar(&f.dsn, "dsn", "", "the PostgreSQL database for --backend postgres (scratch schemas in it, dropped after); default the --store DSN when it is PostgreSQL")
	c.Flags().StringVar(&f.droverBin, "drover-bin", "", "wakeup: the drover binary whose card add makes the other_process cards (default: this one)")
	c.Flags().StringVar(&f.riverBin, "river-bin", "", "compare: a prebuilt bench/river binary (default: build bench/river of this checkout)")
	c.Flags().IntVar(&f.agents, "agents", 500, "supervise: agents supervised at once")
	c.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write this process's CPU profile over the scenario to FILE (go tool pprof FILE): where drover's time goes")
	c.Flags().DurationVar(&f.window, "window", time.Minute, "supervise: how long CPU and memory are sampled once every agent runs")
	return c
}

// benchBackends resolves --backend and --dsn (or a PostgreSQL --store).
// Without --backend, compare runs SQLite and, when a PostgreSQL DSN is
// known, PostgreSQL too; the other scenarios run on PostgreSQL when one is
// known, else on SQLite.
func (a *app) benchBackends(f benchFlags, compare bool) ([]bench.Backend, error) {
	dsn := f.dsn
	if dsn == "" && a.storeDSN != "" && isPostgres(a.storeDSN) {
		dsn = a.storeDSN
	}
	if dsn != "" && !isPostgres(dsn) {
		return nil, usagef("--dsn %q is not a PostgreSQL URL; want postgres://user@host:port/db", store.RedactDSN(dsn))
	}
	names := f.backends
	switch {
	case len(names) > 0:
	case compare && dsn != "":
		names = []string{"sqlite", "postgres"}
	case !compare && dsn != "":
		// drover bench dispatch --store postgres://… (or --dsn) runs there.
		names = []string{"postgres"}
	default:
		names = []string{"sqlite"}
	}
	var out []bench.Backend
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case seen[n]:
			return nil, usagef("--backend names %s twice", n)
		case n == "sqlite":
			out = append(out, bench.Backend{Name: n})
		case n == "postgres" && dsn == "":
			return nil, usagef("--backend postgres needs --dsn postgres://user@host:port/db (or --store with a PostgreSQL DSN)")
		case n == "postgres":
			out = append(out, bench.Backend{Name: n, DSN: dsn})
		default:
			return nil, usagef("unknown --backend %q; valid backends: sqlite, postgres", n)
		}
		seen[n] = true
	}
	return out, nil
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// scratchStores opens n scratch stores beside the configured one
// (bench.Scratch: the board is not touched); cleanup closes and removes
// them. It returns the configured store's DSN too.
func (a *app) scratchStores(ctx context.Context, n int) (dbs []*sqlstore.DB, target string, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	cfg, err := loadConfig(a.configPath)
	if err != nil {
		return nil, "", cleanup, err
	}
	a.cfg = cfg
	target = a.dsn()
	for range n {
		dsn, rm, err := bench.Scratch(ctx, target)
		if err != nil {
			return nil, target, cleanup, err
		}
		undo = append(undo, rm)
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			return nil, target, cleanup, err
		}
		undo = append(undo, func() { s.Close() })
		dbs = append(dbs, s)
	}
	return dbs, target, cleanup, nil
}

func (a *app) benchStore(c *cobra.Command, cards int) error {
	ctx := c.Context()
	dbs, target, cleanup, err := a.scratchStores(ctx, 1)
	defer cleanup()
	if err != nil {
		return err
	}
	st, err := bench.MeasureStore(ctx, dbs[0], cards)
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printScenario("store", st)
	}
	where := "a scratch file beside " + strings.TrimPrefix(target, "sqlite:")
	if st.Backend == "postgres" {
		where = "a scratch schema in " + store.RedactDSN(target)
	}
	w := a.out
	fmt.Fprintf(w, "store: %s (%s), %d cards\n", st.Backend, where, st.Cards)
	fmt.Fprintf(w, "  create               %10.0f ops/s  CreateCard, one after another\n", st.CreateOpsPerS)
	fmt.Fprintf(w, "  list                 %10.0f ops/s  state=%s, limit %d, board order\n", st.ListOpsPerS, st.ListState, st.ListLimit)
	fmt.Fprintf(w, "  list, no index       %10.0f ops/s  the same query with indexes forbidden\n", st.FullScanOpsPerS)
	fmt.Fprintf(w, "  index speedup        %10.1fx       list / list without index\n", st.IndexSpeedup)
	return nil
}

func (a *app) benchWakeup(c *cobra.Command, samples int, bin string) error {
	ctx := c.Context()
	if bin == "" {
		// A test binary is not drover: its tests pass --drover-bin.
		if exe, err := os.Executable(); err == nil && !strings.HasSuffix(exe, ".test") {
			bin = exe
		}
	}
	paths := []bench.WakePath{bench.CrossProcess, bench.InProcess}
	if bin != "" {
		paths = append([]bench.WakePath{bench.OtherProcess}, paths...)
	}
	out := map[string]any{"scenario": "wakeup", "poll_interval_ms": benchWakePoll.Milliseconds(), "samples": samples}
	var stats []bench.WakeStats
	for _, p := range paths {
		st, err := bench.MeasureWake(ctx, "", benchWakePoll, p, samples, bin)
		if err != nil {
			return err
		}
		stats = append(stats, st)
		out[string(p)] = st
	}
	if a.asJSON {
		return a.printJSON(out)
	}
	w := a.out
	fmt.Fprintf(w, "wakeup: dispatcher on a scratch SQLite store, poll_interval %s, %d cards per path\n", benchWakePoll, samples)
	fmt.Fprintf(w, "  %-14s %10s %10s %10s %10s %18s\n", "created by", "mean", "p50", "p99", "max", "mean / poll")
	for _, st := range stats {
		fmt.Fprintf(w, "  %-14s %8.1fms %8.1fms %8.1fms %8.1fms %18.5f\n", st.Path, st.MeanMS, st.P50MS, st.P99MS, st.MaxMS, st.FractionOfPoll)
	}
	fmt.Fprintf(w, "  (other_process: drover card add in a process of its own, from its created_at, in ms; cross_process: another store handle on the same file; in_process: the dispatcher's own handle)\n")
	return nil
}

// printScenario prints a scenario's stats as one JSON object: its
// "scenario" name, then the stats' own fields.
func (a *app) printScenario(scenario string, stats any) error {
	name, err := json.Marshal(scenario)
	if err != nil {
		return err
	}
	body, err := json.Marshal(stats)
	if err != nil {
		return err
	}
	obj := `{"scenario":` + string(name) + `}`
	if len(body) > 2 {
		obj = `{"scenario":` + string(name) + `,` + string(body[1:])
	}
	return a.printJSON(json.RawMessage(obj))
}

func (a *app) benchDispatch(c *cobra.Command, b bench.Backend, cards, slots, nodes int) error {
	st, err := bench.MeasureDispatch(c.Context(), "", bench.DispatchOptions{Store: b.DSN, Cards: cards, Slots: slots, Nodes: nodes})
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printScenario("dispatch", st)
	}
	w := a.out
	where := "a scratch SQLite store"
	if st.Backend == "postgres" {
		where = "a scratch schema in " + store.RedactDSN(b.DSN)
	}
	fmt.Fprintf(w, "dispatch: %d sim cards (zero delay), %d dispatcher(s) with %d slot(s) each, %s\n", st.Cards, st.Nodes, st.Slots, where)
	fmt.Fprintf(w, "  wall           %10.0fms  %.1f cards/s\n", st.WallMS, st.CardsPerS)
	fmt.Fprintf(w, "  per card       %10.1fms  claim → routed, mean\n", st.PerCardMS)
	fmt.Fprintf(w, "  ideal          %10.0fms  %d/(%d×%d) × per card\n", st.IdealMS, st.Cards, st.Slots, st.Nodes)
	fmt.Fprintf(w, "  wall / ideal   %10.2f\n", st.WallVsIdeal)
	return nil
}

func (a *app) benchHistory(c *cobra.Command, cards, events int) error {
	ctx := c.Context()
	dbs, _, cleanup, err := a.scratchStores(ctx, 2)
	defer cleanup()
	if err != nil {
		return err
	}
	hs, err := bench.MeasureHistory(ctx, dbs[0], dbs[1], cards, 10, events)
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printScenario("history", hs)
	}
	w := a.out
	fmt.Fprintf(w, "history: %s, %d cards; the long store has %d events and %d runs (built in %.1fs)\n", hs.Backend, hs.Cards, hs.Events, hs.Runs, hs.SeedS)
	fmt.Fprintf(w, "  %-10s %10s %10s %7s\n", "", "fresh ms", "long ms", "ratio")
	for _, op := range hs.Ops {
		fmt.Fprintf(w, "  %-10s %10.2f %10.2f %6.2fx  %s\n", op.Name, op.FreshMS, op.LongMS, op.Ratio, op.What)
	}
	return nil
}

// startCPUProfile writes this process's CPU profile to path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
