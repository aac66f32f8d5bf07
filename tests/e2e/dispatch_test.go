package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// init + serve with a command agent that is a shell script finishes real
// cards, and the runs show in `drover runs` and `drover status`.
func TestServeFinishesCardsWithAScriptAgent(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{MaxConcurrent: 2}, `echo "did the work in $PWD"; log_end; exit 0`, backend)
		a := e.addCard("first")
		b := e.addCard("second")
		e.start()
		for _, c := range []card{a, b} {
			eventually(t, 20*time.Second, c.Identifier+" reaches review", func() bool { return e.card(c.Identifier).State == "review" })
		}
		all := e.runs("")
		if len(all) != 2 {
			t.Fatalf("drover runs: %d runs, want 2", len(all))
		}
		for _, r := range all {
			if r.Outcome != "succeeded" || r.Attempt != 1 || r.ExitCode == nil || *r.ExitCode != 0 || r.StartedAt == nil || r.FinishedAt == nil {
				t.Errorf("run %+v: want succeeded attempt 1 exit 0 with start and finish", r)
			}
		}
		var st struct {
			Counts  map[string]int `json:"counts"`
			Running []any          `json:"running"`
			Totals  struct {
				Runs int `json:"runs"`
			} `json:"codex_totals"`
			Errors []any `json:"errors"`
		}
		e.jsonOf(&st, "status")
		if st.Counts["cards"] != 2 || len(st.Running) != 0 || st.Totals.Runs != 2 {
			t.Errorf("status: counts %v running %d runs %d; want 2 cards, none running, 2 runs", st.Counts, len(st.Running), st.Totals.Runs)
		}
		// The workspace is the card's own directory and the script ran in it.
		if _, err := os.Stat(filepath.Join(e.dir, ".drover", "workspaces", a.Identifier)); err != nil {
			t.Errorf("workspace of %s: %v", a.Identifier, err)
		}
		if got := len(e.starts()); got != 2 {
			t.Errorf("agent processes started: %d, want 2", got)
		}
	})
}

// With 3 slots and 20 cards, never more than 3 agents are alive at once and
// every card finishes.
func TestThreeSlotsTwentyCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t, wf{MaxConcurrent: 3}, `sleep 0.3; log_end; exit 0`, testkit.SQLite)
	for i := 0; i < 20; i++ {
		e.addCard(fmt.Sprintf("card %d", i))
	}
	e.start()
	servePID := e.serve.cmd.Process.Pid
	maxLive := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		// drover's live children are its agents (no hooks are configured).
		if n := len(liveChildren(servePID)); n > maxLive {
			maxLive = n
		}
		var cs []card
		e.jsonOf(&cs, "card", "ls")
		done := 0
		for _, c := range cs {
			if c.State == "review" {
				done++
			}
		}
		if done == 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 20 cards finished within 60s", done)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if maxLive > 3 {
		t.Errorf("saw %d live agent processes at once; max_concurrent is 3", maxLive)
	}
	if maxLive == 0 {
		t.Errorf("never saw a live agent process; the process census is broken")
	}
	// The script's own record: at no instant were more than 3 between start and end.
	type span struct{ s, e float64 }
	spans := map[int]*span{}
	for _, l := range e.sideLines() {
		if spans[l.PID] == nil {
			spans[l.PID] = &span{}
		}
		if l.What == "start" {
			spans[l.PID].s = l.At
		} else {
			spans[l.PID].e = l.At
		}
	}
	if len(spans) != 20 {
		t.Errorf("%d agent processes ran, want 20 (one per card)", len(spans))
	}
	for pid, a := range spans {
		overlap := 0
		for _, b := range spans {
			if b.s <= a.s && a.s < b.e {
				overlap++
			}
		}
		if overlap > 3 {
			t.Errorf("when pid %d started, %d agents were running", pid, overlap)
		}
	}
	for _, r := range e.runs("") {
		if r.Outcome != "succeeded" || r.Attempt != 1 {
			t.Errorf("run %s: outcome %s attempt %d; want succeeded 1", r.ID, r.Outcome, r.Attempt)
		}
	}
}

// killScript: attempt 1 starts a background child (a grandchild of drover),
// records its pid, then sleeps; later attempts succeed at once.
const killScript = `if [ "$DROVER_ATTEMPT" = 1 ]; then
  sleep 61 &
  echo "$DROVER_CARD_IDENTIFIER $DROVER_ATTEMPT $! child $(date +%s.%N)" >> "$SIDE"
  sleep 62
fi
log_end
exit 0`

// SIGKILL of serve mid-run, then a restart: the run is interrupted, the card
// runs again with attempt 2, the orphaned agent processes are gone, and no
// claim of the dead process survives a lease period.
func TestSigkillMidRunThenRestart(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{}, killScript, backend)
		c := e.addCard("long")
		e.start()
		eventually(t, 15*time.Second, "attempt 1 started with its child", func() bool {
			n := 0
			for _, l := range e.sideLines() {
				if l.What == "child" || l.What == "start" {
					n++
				}
			}
			return n == 2
		})
		var agentPID, childPID int
		for _, l := range e.sideLines() {
			switch l.What {
			case "start":
				agentPID = l.PID
			case "child":
				childPID = l.PID
			}
		}
		if !testkit.Alive(agentPID) || !testkit.Alive(childPID) {
			t.Fatalf("agent %d / child %d should be alive before the kill", agentPID, childPID)
		}
		e.kill(syscall.SIGKILL)
		killedAt := time.Now()
		eventually(t, 5*time.Second, fmt.Sprintf("agent process %d dies with drover (Pdeathsig)", agentPID), func() bool { return !testkit.Alive(agentPID) })
		held := e.card(c.Identifier)
		if held.Claim == nil {
			t.Fatalf("the card should still carry the dead process's claim before a restart")
		}

		restartAt := time.Now()
		e.start()
		eventually(t, 3*time.Second+10*time.Second, "the dead process's claim is gone", func() bool {
			cur := e.card(c.Identifier)
			return cur.Claim == nil || cur.Claim.Epoch != held.Claim.Epoch
		})
		_ = killedAt
		eventually(t, 20*time.Second, "the card finishes on attempt 2", func() bool { return e.card(c.Identifier).State == "review" })
		rs := e.runsInOrder(c.Identifier)
		if len(rs) != 2 || rs[0].Attempt != 1 || rs[0].Outcome != "interrupted" || rs[1].Attempt != 2 || rs[1].Outcome != "succeeded" {
			t.Fatalf("runs %+v; want attempt 1 interrupted, attempt 2 succeeded", rs)
		}
		if rs[0].Counted {
			t.Errorf("an interrupted run must not count toward max_attempts")
		}
		// Server-side time: the restarted process took the claim back (and
		// recorded the run interrupted) within one lease of starting.
		if rs[0].FinishedAt == nil || rs[0].FinishedAt.Sub(restartAt) > 3*time.Second {
			t.Errorf("interrupted run recorded at %v, %v after the restart; lease is 3s", rs[0].FinishedAt, rs[0].FinishedAt.Sub(restartAt))
		}
		if testkit.Alive(childPID) {
			t.Errorf("the agent's child process %d outlived the crash and the restart (orphaned agent work)", childPID)
		}
	})
}

// SIGKILL, then a restart under a different node name: the new process
// takes the dead owner's claim back once the lease expired.
func TestSigkillRecoveredByAnotherNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, wf{}, killScript, testkit.SQLite)
	c := e.addCard("long")
	e.start()
	eventually(t, 15*time.Second, "attempt 1 started", func() bool { return len(e.starts()) == 1 })
	held := e.card(c.Identifier)
	if held.Claim == nil {
		t.Fatal("no claim while running")
	}
	e.kill(syscall.SIGKILL)
	killedAt := time.Now()
	wfText, _ := os.ReadFile(filepath.Join(e.dir, "WORKFLOW.md"))
	e.writeFile("WORKFLOW.md", strings.Replace(string(wfText), "dispatch:\n", "dispatch:\n  node: other-node\n", 1))
	restartAt := time.Now()
	e.start()
	// One lease (3s) from the last heartbeat, plus a poll and some slack.
	eventually(t, 10*time.Second, "the claim of the dead node is released", func() bool {
		cur := e.card(c.Identifier)
		return cur.Claim == nil || cur.Claim.Owner == "other-node"
	})
	eventually(t, 20*time.Second, "the card finishes on attempt 2", func() bool { return e.card(c.Identifier).State == "review" })
	rs := e.runsInOrder(c.Identifier)
	if len(rs) != 2 || rs[0].Outcome != "interrupted" || rs[1].Attempt != 2 {
		t.Fatalf("runs %+v; want attempt 1 interrupted then attempt 2", rs)
	}
	// Server-side time: the claim was taken back (the run recorded
	// interrupted) soon after its lease ended, not after the leader lock's
	// two leases. The last lease the dead node wrote may be newer than the
	// one read above; it is at most one lease after the kill.
	expiry := killedAt.Add(3 * time.Second)
	if restartAt.After(expiry) {
		expiry = restartAt
	}
	if over := rs[0].FinishedAt.Sub(expiry); over > 1500*time.Millisecond {
		t.Errorf("claim of the dead node was taken back %v after its lease could have ended (lease 3s, poll 200ms)", over.Round(100*time.Millisecond))
	}
}

// SIGTERM stops the agents, records the run as interrupted, returns the card
// to eligible and exits within a bounded time.
func TestSigtermStopsAgentsAndReturnsCards(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{}, `exec sleep 63`, backend)
		c := e.addCard("long")
		e.start()
		eventually(t, 15*time.Second, "the agent started", func() bool { return len(e.starts()) == 1 })
		pid := e.starts()[0].PID
		took := e.kill(syscall.SIGTERM)
		if took > 10*time.Second {
			t.Errorf("serve took %v to exit after SIGTERM", took)
		}
		if testkit.Alive(pid) {
			t.Errorf("agent %d still alive after serve exited", pid)
		}
		cur := e.card(c.Identifier)
		if cur.State != "ready" || cur.Claim != nil {
			t.Errorf("card after SIGTERM: state %s claim %+v; want ready and unclaimed", cur.State, cur.Claim)
		}
		rs := e.runs(c.Identifier)
		if len(rs) != 1 || rs[0].Outcome != "interrupted" || rs[0].Counted {
			t.Fatalf("runs %+v; want one interrupted, uncounted run", rs)
		}
	})
}

// A card made eligible by another process while serve idles on a 30s poll
// starts quickly (event-driven wake-up). Coarse: well under the poll.
func TestWakeUpOnNewCard(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{Poll: "30s"}, `log_end; exit 0`, backend)
		e.start()
		// Let serve reach its idle wait (the first tick runs at once).
		eventually(t, 30*time.Second, "serve records a tick", func() bool {
			var st struct {
				Nodes []any `json:"nodes"`
			}
			out, _, code := e.drover(nil, "status", "--json")
			_ = st
			return code == 0 && strings.Contains(out, "last_tick")
		})
		time.Sleep(500 * time.Millisecond)
		added := time.Now()
		c := e.addCard("wake up")
		// Far below the 30s poll: only a wake-up starts it this soon, and a
		// loaded machine still has the time to spawn the agent.
		eventually(t, 10*time.Second, "the new card starts", func() bool { return len(e.starts()) == 1 })
		t.Logf("%s started %v after card add", c.Identifier, time.Since(added).Round(time.Millisecond))
	})
}
