package status

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
)

// Retention is what the store keeps and what its latest collection did.
type Retention struct {
	Events string `json:"events"` // "90d", "forever"
	Runs   string `json:"runs"`
	Logs   string `json:"logs"`
	// LastGC is the latest collection (by the leader or `drover gc`); null
	// before the first.
	LastGC *store.GCReport `json:"last_gc"`
}

func (s *State) retention(ctx context.Context, st store.Store, cfg *config.Config) error {
	r := config.Retention{Events: config.DefaultRetainEvents, Runs: config.DefaultRetainRuns, Logs: config.DefaultRetainLogs}
	if cfg != nil {
		r = cfg.Retention
	}
	s.Retention = Retention{Events: config.RetentionString(r.Events), Runs: config.RetentionString(r.Runs), Logs: config.RetentionString(r.Logs)}
	p, ok := st.(store.Pruner)
	if !ok {
		return nil
	}
	last, err := p.LastGC(ctx)
	if err != nil {
		return fmt.Errorf("last garbage collection: %w", err)
	}
	s.Retention.LastGC = last
	return nil
}

// renderRetention prints the RETENTION section.
func renderRetention(w io.Writer, r Retention, now time.Time) {
	section(w, "RETENTION")
	fmt.Fprintf(w, "  keeps events %s · runs %s · logs %s\n", r.Events, r.Runs, r.Logs)
	g := r.LastGC
	if g == nil {
		fmt.Fprintln(w, "  no collection yet (the leader runs one hourly; drover gc runs one now)")
		return
	}
	fmt.Fprintf(w, "  last collection %s ago: %d events, %d runs, %d notifications, %d logs (%s), %d agent comments pruned in %dms\n",
		Dur(now.Sub(g.At)), g.Events, g.Runs, g.Outbox, g.Logs, Bytes(g.LogBytes), g.Comments, g.DurationMS)
	if g.Error != "" {
		fmt.Fprintf(w, "  it stopped early: %s\n", g.Error)
	}
}

// Bytes writes n in B, KB, MB or GB.
func Bytes(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f KB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(n)/(k*k))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(k*k*k))
}
