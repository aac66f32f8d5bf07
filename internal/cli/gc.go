package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/retention"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/store"
)

func (a *app) gcCmd() *cobra.Command {
	var dry bool
	c := &cobra.Command{
		Use:   "gc",
		Short: "Prune history older than WORKFLOW.md's retention (events, runs, logs); --dry-run says what would go",
		Long: `drover gc removes what the retention section of WORKFLOW.md lets go: events
and settled notifications older than retention.events, finished runs older than
retention.runs (with their logs), and run logs older than retention.logs. It never
removes an open run, the latest run of a card or its log, or a notification not
yet delivered. It works in small batches, so a running drover serve keeps going;
the leader of drover serve runs the same collection hourly. The report (also
with --dry-run) says how many of each it deleted or would delete.`,
		Args: cobra.NoArgs,
		RunE: a.withStore(func(c *cobra.Command, _ []string) error {
			if a.cfg == nil || a.cfg.Full == nil {
				return fmt.Errorf("%w: no WORKFLOW.md at %s: drover gc prunes by its retention section; run it in the board's directory or pass --config PATH", errConfig, a.configPath)
			}
			p, ok := a.st.(store.Pruner)
			if !ok {
				return errors.New("this store cannot prune")
			}
			r := a.cfg.Full.Retention
			rep, err := retention.Collect(c.Context(), p, r, time.Now(), retention.Options{DryRun: dry})
			if !dry {
				if rerr := p.RecordGC(c.Context(), rep); rerr != nil && err == nil {
					err = rerr
				}
			}
			if a.asJSON {
				if perr := a.printJSON(gcJSON{Retention: r, GCReport: rep}); perr != nil {
					return perr
				}
				return err
			}
			verb := "pruned"
			if dry {
				verb = "would prune (dry run)"
			}
			fmt.Fprintf(a.out, "retention: events %s · runs %s · logs %s\n", config.RetentionString(r.Events), config.RetentionString(r.Runs), config.RetentionString(r.Logs))
			fmt.Fprintf(a.out, "%s: %d events, %d notifications, %d agent comments, %d runs, %d logs (%s) in %dms\n",
				verb, rep.Events, rep.Outbox, rep.Comments, rep.Runs, rep.Logs, status.Bytes(rep.LogBytes), rep.DurationMS)
			return err
		}),
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "count what would be pruned; delete nothing")
	return c
}

// gcJSON is `drover gc --json`: the report plus the periods applied.
type gcJSON struct {
	Retention config.Retention `json:"retention"`
	store.GCReport
}
