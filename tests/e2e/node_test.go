package e2e_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// A second drover serve under the same node name is refused while the first
// lives, even when the board idles on a slow poll; the first one's running
// card is left alone.
func TestSecondServeWithTheSameNodeNameIsRefused(t *testing.T) {
	e := newEnv(t, wf{Default: "sim", Poll: "60s", Lease: "3s"}, "", testkit.SQLite)
	c := e.addCard("long", "--spec", `{"sim":["succeeded"],"sim_delay":"4s"}`)
	e.start()
	eventually(t, 10*time.Second, "the card to start", func() bool { return e.card(c.Identifier).Claim != nil })
	time.Sleep(4 * time.Second) // longer than a lease: the first node's row must stay fresh on its own
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.Binary(t), "serve")
	cmd.Dir, cmd.Env = e.dir, e.cmdEnv()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), "node name") {
		t.Fatalf("second serve: err %v, output:\n%s", err, out)
	}
	eventually(t, 15*time.Second, "the card to finish", func() bool { return e.card(c.Identifier).State == "review" })
	for _, r := range e.runs(c.Identifier) {
		if r.Outcome != "succeeded" {
			t.Fatalf("run %d ended %s: the refused process must not touch the live run", r.Attempt, r.Outcome)
		}
	}
}
