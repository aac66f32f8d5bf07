package e2e_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// escapeScript starts children that leave the agent in every way a shell
// can: one in the background of the agent's group, one with an empty
// environment (no DROVER_RUN_ID tag), one in a session of its own (outside
// the agent's process group). Each records its pid; the agent then waits.
const escapeScript = `sleep 97 &
echo "$DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $! child $(date +%s.%N)" >> "$SIDE"
env -i sleep 98 &
echo "$DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $! child $(date +%s.%N)" >> "$SIDE"
setsid env -i sleep 99 &
echo "$DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $! child $(date +%s.%N)" >> "$SIDE"
wait`

// A SIGKILL of drover takes the whole tree of every run with it, within a
// few seconds and without a restart: the background child, the child that
// dropped the environment and the child in its own session (issue 13 item 9).
func TestSigkillTakesTheAgentsWholeTree(t *testing.T) {
	e := newEnv(t, wf{}, escapeScript, testkit.SQLite)
	e.addCard("escape")
	e.start()
	var pids []int
	eventually(t, 15*time.Second, "the agent started its three children", func() bool {
		pids = pids[:0]
		for _, l := range e.sideLines() {
			if l.What == "start" || l.What == "child" {
				pids = append(pids, l.PID)
			}
		}
		return len(pids) == 4
	})
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	time.Sleep(200 * time.Millisecond) // the children have exec'd sleep
	for _, p := range pids {
		if !testkit.Alive(p) {
			t.Fatalf("process %d should be alive before the kill", p)
		}
	}
	e.kill(syscall.SIGKILL)
	for _, p := range pids {
		eventually(t, 5*time.Second, fmt.Sprintf("process %d of the run dies with drover", p), func() bool { return !testkit.Alive(p) })
	}
}
