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

// A card moved into a sink while its job is still winding down (routed, not
// yet forgotten) keeps its workspace for that sweep only: the next sweep,
// once the job is gone, removes it. It used to be skipped for good, because
// the sweep's watermark moved past it (seen as a flaky
// TestOperatorCancelRemovesWorkspaceOnSink on a loaded machine).
func TestSweepComesBackToACardWhoseJobWasWindingDown(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(3).Set("workspace", "{cleanup: on_sink}"))
	c := w.add("reviewed", "", `{"sim":["succeeded"],"sim_delay":"1ms"}`)
	d := w.dispatcher("n1")
	stop := w.run(d)
	w.waitFor(c.Identifier, "review", inState("review"))
	stop()
	dir, _ := workspace.Path(w.cfg.Workspace.Root, c.Identifier)
	if _, err := w.ops.Cancel(context.Background(), c.ID, "not needed"); err != nil {
		t.Fatal(err)
	}
	d.jobs.add(&job{card: c})
	d.sweep.run(context.Background(), d.o.Store, d.cfg.Load(), d.log, d.o.SandboxHomes, d.jobs.has)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the workspace of a card with a job went at once: %v", err)
	}
	d.jobs.remove(c.ID)
	d.sweep.run(context.Background(), d.o.Store, d.cfg.Load(), d.log, d.o.SandboxHomes, d.jobs.has)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the next sweep left the workspace of the cancelled card: %v", err)
	}
}
