package dispatch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/workspace"
)

// waitGone waits until path is gone (the dispatcher sweeps each tick).
func waitGone(t *testing.T, path, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: workspace %s still there", what, path)
}

// Under the default workspace.cleanup (on_done), card mv … done removes the
// workspace of a card that is not running (issue 13, item 7).
func TestOperatorMoveToDoneRemovesWorkspace(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("reviewed", "", `{"sim":["succeeded"],"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	w.waitFor(c.Identifier, "review", inState("review"))
	dir, err := workspace.Path(w.cfg.Workspace.Root, c.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the run left no workspace to clean: %v", err)
	}
	if _, err := w.ops.Move(context.Background(), c.ID, "done", "merged"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dir, "card mv done")
}

// Under on_sink, card cancel removes the workspace too.
func TestOperatorCancelRemovesWorkspaceOnSink(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(3).Set("workspace", "{cleanup: on_sink}"))
	c := w.add("reviewed", "", `{"sim":["succeeded"],"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	w.waitFor(c.Identifier, "review", inState("review"))
	dir, _ := workspace.Path(w.cfg.Workspace.Root, c.Identifier)
	if _, err := w.ops.Cancel(context.Background(), c.ID, "not needed"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dir, "card cancel")
}
