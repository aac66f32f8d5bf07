package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/bench/policybench"
)

func (a *app) benchPolicyCmd() *cobra.Command {
	var o policybench.Options
	c := &cobra.Command{
		Use:   "policy",
		Short: "What a failure policy wastes: drover's beside models of its peers' on the incidents that define the field",
		Long: `Play the incidents drover's failure policy answers on a fake clock, through
drover's real dispatcher, failure policy and store (SQLite in memory, the
built-in policy defaults) and through models of the policies its peers
document, each citing its document (models, not the peers' code). Every
policy sees the same outcome stream; runs take no time on the fake clock.

Per scenario and policy: runs (attempts started, including starts refused
before a session), the cost of the agent sessions at --price each, the time
until every card shows a truthful state (the scenario's: done, waiting
with the right reason, or stopped for a human when the card itself must
change; "never" within the scenario's horizon, null in --json), the cards that finished
without a human acting on them, and the human actions needed (a human acts
15 minutes after the fault clears, or at once when an operator clears it).
Then whether drover spends no more runs than any peer, finishes no fewer
cards without a human, and shows the truth no later, with every exception.
Deterministic: the same --seed prints the same table.`,
		Example: `  drover bench policy
  drover bench policy --price 2.40 --slots 50
  drover bench policy --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.PriceUSD <= 0 {
				return usagef("--price must be positive (got %g)", o.PriceUSD)
			}
			if o.Slots <= 0 {
				return usagef("--slots must be positive (got %d)", o.Slots)
			}
			rs, err := policybench.Run(c.Context(), o)
			if err != nil {
				return err
			}
			if a.asJSON {
				return a.printJSON(rs)
			}
			a.printPolicyBench(o, rs)
			return nil
		},
	}
	c.Flags().Float64Var(&o.PriceUSD, "price", policybench.DefaultPriceUSD, "dollars per agent session (a start refused before a session costs nothing)")
	c.Flags().IntVar(&o.Slots, "slots", policybench.DefaultSlots, "drover's agent slots (dispatch.max_concurrent); the peers' models couple no cards, so their rows do not depend on it")
	c.Flags().Uint64Var(&o.Seed, "seed", 1, "seed of drover's backoff jitter")
	return c
}

func (a *app) printPolicyBench(o policybench.Options, rs []policybench.Result) {
	w := a.out
	fmt.Fprintf(w, "policy: %d incidents on a fake clock; drover (its real dispatcher, %d slots, seed %d) beside models of its peers' documented policies; $%.2f per agent session\n",
		len(policybench.Scenarios), o.Slots, o.Seed, o.PriceUSD)
	fmt.Fprintf(w, "  %-24s %-15s %6s %9s %10s %11s %7s\n", "scenario", "policy", "runs", "cost $", "truth at", "done alone", "humans")
	last := ""
	for _, r := range rs {
		if r.Scenario != last && last != "" {
			fmt.Fprintln(w)
		}
		last = r.Scenario
		fmt.Fprintf(w, "  %-24s %-15s %6d %9.2f %10s %11d %7d\n", r.Scenario, r.Policy, r.Runs, r.CostUSD, truthAt(r.TimeToTruthS), r.FinishedWithoutHuman, r.HumanActions)
	}
	fmt.Fprintln(w, "\nscenarios:")
	for _, s := range policybench.Scenarios {
		fmt.Fprintf(w, "  %-24s %s\n", s.Name, s.What)
	}
	fmt.Fprintln(w, "models (each a model of the document it cites, not the peer's code):")
	for _, p := range policybench.Peers {
		fmt.Fprintf(w, "  %-15s %s; after %s\n", p.Name, p.Model, p.Cites)
	}
	vs := policybench.Relations(rs)
	pairs := len(rs) - len(policybench.Scenarios)
	fmt.Fprintf(w, "relations (drover: no more runs, no fewer cards done alone, truth no later), %d peer rows × 3: %d broken\n", pairs, len(vs))
	for _, v := range vs {
		fmt.Fprintf(w, "  drover loses %s\n", v)
	}
}

func truthAt(s *float64) string {
	if s == nil {
		return "never"
	}
	d := time.Duration(*s * float64(time.Second))
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
