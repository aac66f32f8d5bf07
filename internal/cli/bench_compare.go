package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/bench"
)

// benchCompare runs River and drover side by side (bench.Compare) and
// prints each figure and the ratios. Progress lines go to stderr so that
// --json output stays one document.
func (a *app) benchCompare(c *cobra.Command, backends []bench.Backend, jobs int, slots []int, rounds int, riverBin string) error {
	ctx := c.Context()
	if riverBin == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		mod, err := bench.FindRiverModule(wd)
		if err != nil {
			return err
		}
		tmp, err := os.MkdirTemp("", "drover-bench-river-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		fmt.Fprintf(a.errw, "compare: building %s\n", mod)
		if riverBin, err = bench.BuildRiver(ctx, mod, tmp); err != nil {
			return err
		}
	}
	cs, err := bench.Compare(ctx, bench.CompareOptions{Backends: backends, Jobs: jobs, Slots: slots, Rounds: rounds, River: riverBin, Progress: a.errw})
	if err != nil {
		return err
	}
	if a.asJSON {
		return a.printScenario("compare", cs)
	}
	w := a.out
	fmt.Fprintf(w, "compare: %d no-op jobs (drover: sim cards that succeed at once), %d rounds interleaved, River %s\n", cs.Jobs, cs.Rounds, cs.RiverVersion)
	fmt.Fprintf(w, "  %-8s %-7s %-11s %7s %12s %12s %12s %8s\n", "backend", "system", "setting", "workers", "median/s", "min/s", "max/s", "spread")
	for _, f := range cs.Figures {
		fmt.Fprintf(w, "  %-8s %-7s %-11s %7d %12.0f %12.0f %12.0f %7.0f%%\n", f.Backend, f.System, f.Setting, f.Workers, f.MedianPerS, f.MinPerS, f.MaxPerS, f.SpreadPct)
	}
	fmt.Fprintf(w, "  drover / River (medians):\n")
	for _, r := range cs.Ratios {
		fmt.Fprintf(w, "  %-8s drover %-11s against River %-8s %6.2fx  (%.0f/s vs %.0f/s)\n", r.Backend, r.Setting, r.Against, r.Ratio, r.Drover, r.River)
	}
	fmt.Fprintf(w, "  (tuned: River's benchmark settings, FetchCooldown 2ms, FetchPollInterval 20ms, 2,000 workers; default: River's defaults, 100 workers;\n")
	fmt.Fprintf(w, "   River is a reference measurement, not a target: drover's jobs are agent runs of minutes, not no-op jobs)\n")
	return nil
}
