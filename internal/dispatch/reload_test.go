package dispatch

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/reload"
	"github.com/drover-dev/drover/internal/status"
)

// A refused WORKFLOW.md edit stays among the state's errors on every tick
// while the file is still broken, and leaves them once the file is fixed
// (issue 13, item 3: it vanished after one tick).
func TestRefusedReloadStaysVisibleUntilFixed(t *testing.T) {
	w := newWorld(t, 3)
	wf := worldWorkflow(3)
	path := wf.Write(t, w.dir)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w.cfg = cfg
	d := w.dispatcher("n1")
	d.o.Watcher = reload.NewWatcher(path, cfg)
	ctx := context.Background()
	var since []time.Time // of each config error seen, in order
	configErrors := func() []string {
		t.Helper()
		s, err := status.Snapshot(ctx, w.st, cfg, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range s.Errors {
			if e.Code == "config_error" {
				out = append(out, e.Message)
				if e.Since != nil {
					since = append(since, *e.Since)
				}
			}
		}
		return out
	}

	d.Tick(ctx)
	if got := configErrors(); len(got) != 0 {
		t.Fatalf("a valid config shows errors %q", got)
	}
	if err := os.WriteFile(path, []byte("---\npolicy: {max_attempts: 0}\n---\nbroken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		d.Tick(ctx)
		got := configErrors()
		if len(got) != 1 || !strings.Contains(got[0], "max_attempts") {
			t.Fatalf("tick %d after the refused edit: config errors %q, want the refusal naming policy.max_attempts", i+1, got)
		}
	}
	// It says since when the file has been refused: the first refusal, not
	// the latest tick.
	if len(since) != 3 || !since[0].Equal(since[1]) || !since[1].Equal(since[2]) {
		t.Errorf("config error since %v on three ticks; want the first refusal's time each time", since)
	}
	wf.Write(t, w.dir)
	d.Tick(ctx)
	if got := configErrors(); len(got) != 0 {
		t.Fatalf("after the file was fixed the state still shows %q", got)
	}
}
