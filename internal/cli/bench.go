package cli

import (
	"fmt"
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

func (a *app) benchCmd() *cobra.Command {
	var cards, slots, events int
	c := &cobra.Command{
		Use:   "bench SCENARIO",
		Short: "Measure the store, wake-ups and dispatch on this machine (scenarios: " + strings.Join(bench.Scenarios, ", ") + ")",
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
            N cards created by another store handle (as another process
            would) and N by the dispatcher's own: the time to their claim
            and its fraction of the poll interval. Default --cards 20.
  dispatch  N sim cards that succeed at once through a dispatcher with
            --slots K on a scratch SQLite store: cards/s, and wall time
            against the ideal N/K × the per-card time measured in the run.
            Default --cards 200.
  history   the same board (N cards, a fifth ready) on two scratch stores of
            the configured backend, one fresh and one with --events events
            over the past year and ten finished runs per card: the median
            time of status, the dashboard's reads, card show and a claim on
            each, and their ratio (about 1: a long history costs nothing).
            Default --cards 1000 --events 10000000.`,
		Example: `  drover bench store --cards 10000
  drover bench wakeup --json
  drover bench dispatch --cards 500 --slots 8
  drover bench history --events 1000000 --json`,
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
			if c.Flags().Changed("cards") && cards <= 0 {
				return usagef("--cards must be positive (got %d)", cards)
			}
			if slots <= 0 {
				return usagef("--slots must be positive (got %d)", slots)
			}
			n := func(def int) int {
				if cards > 0 {
					return cards
				}
				return def
			}
			switch args[0] {
			case "store":
				return a.benchStore(c, n(5000))
			case "wakeup":
				return a.benchWakeup(c, n(20))
			case "history":
				if events <= 0 {
					return usagef("--events must be positive (got %d)", events)
				}
				if n(1000) < 200 {
					return usagef("history needs --cards 200 or more (a fifth are claimed while measuring)")
				}
				return a.benchHistory(c, n(1000), events)
			default:
				return a.benchDispatch(c, n(200), slots)
			}
		},
	}
	c.Flags().IntVar(&cards, "cards", 0, "number of cards (default per scenario: store 5000, wakeup 20 per path, dispatch 200)")
	c.Flags().IntVar(&slots, "slots", 4, "dispatch: agent slots (max_concurrent)")
	c.Flags().IntVar(&events, "events", 10_000_000, "history: events in the long store")
	return c
}

func (a *app) benchStore(c *cobra.Command, cards int) error {
	ctx := c.Context()
	cfg, err := loadConfig(a.configPath)
	if err != nil {
		return err
	}
	a.cfg = cfg
	target := a.dsn()
	dsn, cleanup, err := bench.Scratch(ctx, target)
	if err != nil {
		return err
	}
	defer cleanup()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := bench.MeasureStore(ctx, s, cards)
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printJSON(struct {
			Scenario string `json:"scenario"`
			bench.StoreStats
		}{"store", st})
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

func (a *app) benchWakeup(c *cobra.Command, samples int) error {
	ctx := c.Context()
	var out []bench.WakeStats
	for _, p := range []bench.WakePath{bench.CrossProcess, bench.InProcess} {
		st, err := bench.MeasureWake(ctx, "", benchWakePoll, p, samples)
		if err != nil {
			return err
		}
		out = append(out, st)
	}
	if a.asJSON {
		return a.printJSON(map[string]any{"scenario": "wakeup", "poll_interval_ms": benchWakePoll.Milliseconds(),
			"samples": samples, string(out[0].Path): out[0], string(out[1].Path): out[1]})
	}
	w := a.out
	fmt.Fprintf(w, "wakeup: dispatcher on a scratch SQLite store, poll_interval %s, %d cards per path\n", benchWakePoll, samples)
	fmt.Fprintf(w, "  %-14s %10s %10s %10s %18s\n", "created by", "mean", "p50", "max", "mean / poll")
	for _, st := range out {
		fmt.Fprintf(w, "  %-14s %8.1fms %8.1fms %8.1fms %18.5f\n", st.Path, st.MeanMS, st.P50MS, st.MaxMS, st.FractionOfPoll)
	}
	fmt.Fprintf(w, "  (cross_process: another store handle on the same file; in_process: the dispatcher's own handle)\n")
	return nil
}

func (a *app) benchDispatch(c *cobra.Command, cards, slots int) error {
	st, err := bench.MeasureDispatch(c.Context(), "", cards, slots)
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printJSON(struct {
			Scenario string `json:"scenario"`
			bench.DispatchStats
		}{"dispatch", st})
	}
	w := a.out
	fmt.Fprintf(w, "dispatch: %d sim cards (zero delay), a dispatcher with %d slot(s), a scratch SQLite store\n", st.Cards, st.Slots)
	fmt.Fprintf(w, "  wall           %10.0fms  %.1f cards/s\n", st.WallMS, st.CardsPerS)
	fmt.Fprintf(w, "  per card       %10.1fms  claim → routed, mean\n", st.PerCardMS)
	fmt.Fprintf(w, "  ideal          %10.0fms  %d/%d × per card\n", st.IdealMS, st.Cards, st.Slots)
	fmt.Fprintf(w, "  wall / ideal   %10.2f\n", st.WallVsIdeal)
	return nil
}

func (a *app) benchHistory(c *cobra.Command, cards, events int) error {
	ctx := c.Context()
	cfg, err := loadConfig(a.configPath)
	if err != nil {
		return err
	}
	a.cfg = cfg
	var dbs []*sqlstore.DB
	for range 2 {
		dsn, cleanup, err := bench.Scratch(ctx, a.dsn())
		if err != nil {
			return err
		}
		defer cleanup()
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			return err
		}
		defer s.Close()
		dbs = append(dbs, s)
	}
	hs, err := bench.MeasureHistory(ctx, dbs[0], dbs[1], cards, 10, events)
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printJSON(struct {
			Scenario string `json:"scenario"`
			bench.HistoryStats
		}{"history", hs})
	}
	w := a.out
	fmt.Fprintf(w, "history: %s, %d cards; the long store has %d events and %d runs (built in %.1fs)\n", hs.Backend, hs.Cards, hs.Events, hs.Runs, hs.SeedS)
	fmt.Fprintf(w, "  %-10s %10s %10s %7s\n", "", "fresh ms", "long ms", "ratio")
	for _, op := range hs.Ops {
		fmt.Fprintf(w, "  %-10s %10.2f %10.2f %6.2fx  %s\n", op.Name, op.FreshMS, op.LongMS, op.Ratio, op.What)
	}
	return nil
}
