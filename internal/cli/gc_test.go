package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// drover gc --dry-run counts, drover gc prunes and records, and status shows
// the collection.
func TestGCDryRunThenPrune(t *testing.T) {
	e := newEnv(t, "")
	e.ok("card", "add", "--title", "kept")
	st := testkit.Open(t, e.dsn)
	old := time.Now().Add(-365 * 24 * time.Hour)
	var evs []board.Event
	for i := 0; i < 1200; i++ {
		evs = append(evs, board.Event{At: old, Type: "old"})
	}
	if err := st.Apply(context.Background(), store.Change{Events: evs}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var dry struct {
		Retention map[string]string `json:"retention"`
		DryRun    bool              `json:"dry_run"`
		Events    int               `json:"events"`
	}
	e.okJSON(&dry, "gc", "--dry-run")
	if !dry.DryRun || dry.Events != 1200 || dry.Retention["events"] != "90d" {
		t.Fatalf("gc --dry-run = %+v, want 1200 events under 90d", dry)
	}
	if out := e.ok("gc", "--dry-run"); !strings.Contains(out, "would prune (dry run): 1200 events") {
		t.Fatalf("gc --dry-run text:\n%s", out)
	}
	var rep struct {
		DryRun bool `json:"dry_run"`
		Events int  `json:"events"`
	}
	e.okJSON(&rep, "gc")
	if rep.DryRun || rep.Events != 1200 {
		t.Fatalf("gc = %+v, want 1200 events pruned", rep)
	}
	var evsLeft []map[string]any
	e.okJSON(&evsLeft, "events")
	if len(evsLeft) != 1 {
		t.Errorf("%d events left, want the card's created event", len(evsLeft))
	}
	var s struct {
		Retention struct {
			LastGC *struct {
				Events int `json:"events"`
			} `json:"last_gc"`
		} `json:"retention"`
	}
	e.okJSON(&s, "status")
	if s.Retention.LastGC == nil || s.Retention.LastGC.Events != 1200 {
		t.Errorf("status retention.last_gc = %+v, want the collection of 1200 events", s.Retention.LastGC)
	}
}
