package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// unseenFault is a command agent that fails on every card with an error no
// phrase table knows, in words of its own, while the file $FAULT exists,
// and does the work once it is gone. The card's identifier and the pid in
// the text differ on every run, as ids do in the wild.
const unseenFault = `if [ -f "$FAULT" ]; then
  echo "frobnicator quorum lost for shard $DROVER_CARD_IDENTIFIER (epoch $$): standing by" >&2
  log_end
  exit 3
fi
echo "did the work on $DROVER_CARD_IDENTIFIER"
log_end
`

// sibling is a second drover installation on e's store: its own directory
// and WORKFLOW.md (dispatch.node node), the same agent script.
func (e *env) sibling(w wf, node, script string) *env {
	e.t.Helper()
	w.Node = node
	s := &env{t: e.t, dir: e.t.TempDir(), dsn: e.dsn, side: e.side}
	s.writeFile("WORKFLOW.md", w.render())
	s.writeScript(script)
	e.t.Cleanup(func() {
		if s.serve != nil {
			s.kill(9)
		}
		if e.t.Failed() {
			s.dumpLogs()
		}
	})
	return s
}

// fleet is e and, on PostgreSQL, a second node n2 on e's store; each runs
// script.
func (e *env) fleet(w wf, backend testkit.Backend, script string) []*env {
	e.t.Helper()
	nodes := []*env{e}
	if backend == testkit.Postgres {
		nodes = append(nodes, e.sibling(w, "n2", script))
	}
	for _, n := range nodes {
		n.writeScript(script)
	}
	return nodes
}

// allIn waits until every card is in state.
func (e *env) allIn(within time.Duration, state string, cards []card) {
	e.t.Helper()
	eventually(e.t, within, fmt.Sprintf("all %d cards in %s", len(cards), state), func() bool {
		for _, c := range cards {
			if e.card(c.Identifier).State != state {
				return false
			}
		}
		return true
	})
}

// TestUnseenFailureAcrossCardsHoldsTheProfile is the board-level loop: 30
// cards, one fault none of them can change, fast backoff. drover notices
// that one failure ends runs on several cards, holds the profile instead
// of spending the cards' budgets (at most 10 runs while the fault lasts, no
// card gives up, the operator told once), and when the fault goes away a
// probe finds it and every card finishes. On PostgreSQL with two nodes.
func TestUnseenFailureAcrossCardsHoldsTheProfile(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		h := testkit.NewReceiver(t)
		w := wf{MaxConcurrent: 2, Notify: notifyYAML(h), Policy: "  breaker: {cooldown: 2s}\n", Node: "n1"}
		e := newEnv(t, w, unseenFault, backend)
		fault := filepath.Join(e.dir, "fault")
		e.writeFile("fault", "on")
		nodes := e.fleet(w, backend, "FAULT="+fault+"\n"+unseenFault)
		var cards []card
		for i := range 30 {
			cards = append(cards, e.addCard(fmt.Sprintf("card %d", i)))
		}
		start := time.Now()
		for _, n := range nodes {
			n.start()
		}
		eventually(t, 30*time.Second, "the script profile to be held", func() bool {
			a := e.agents()["script"]
			return (a.State == "open" || a.State == "half_open") && strings.Contains(a.Reason, "same failure")
		})
		time.Sleep(time.Until(start.Add(20 * time.Second)))
		rs := e.runs("")
		if len(rs) > 10 {
			t.Fatalf("%d runs in the fault's first 20s, want at most 10 (the fault is the profile's, not the cards')", len(rs))
		}
		counted := 0
		for _, r := range rs {
			if r.Counted {
				counted++
			}
			if r.Kind != "unknown" && r.Outcome != "" {
				t.Errorf("run %s ended %s/%s; the unseen failure is unknown", r.ID, r.Outcome, r.Kind)
			}
		}
		if counted > 2*len(nodes) {
			t.Errorf("%d runs counted toward their cards' budgets, want at most the %d that raced the hold", counted, 2*len(nodes))
		}
		for _, c := range cards {
			if cur := e.card(c.Identifier); cur.State == "blocked" || len(cur.GaveUp) > 0 && string(cur.GaveUp) != "null" {
				t.Fatalf("%s ended %s (gave up %s) while its profile was at fault", c.Identifier, cur.State, cur.GaveUp)
			}
		}
		a := e.agents()["script"]
		for _, want := range []string{"frobnicator quorum lost for shard DRV-#", "example run"} {
			if !strings.Contains(a.Reason, want) {
				t.Errorf("the profile's reason %q does not say %q", a.Reason, want)
			}
		}
		explain := e.ok("explain", cards[29].Identifier)
		if !strings.Contains(explain, "same failure") {
			t.Errorf("explain of a waiting card does not say why the profile is held:\n%s", explain)
		}
		if n := mentioning(h, `"profile_paused"`, "same failure"); n != 1 {
			t.Errorf("%d notifications of the hold, want exactly one:\n%s", n, received(h))
		}

		// The fault goes away: a probe finds it, and every card finishes.
		if err := os.Remove(fault); err != nil {
			t.Fatal(err)
		}
		e.allIn(90*time.Second, "review", cards)
		if a := e.agents()["script"]; a.State != "closed" {
			t.Errorf("after the probe passed the profile is %s (%s), want closed", a.State, a.Reason)
		}
	})
}

// repeatScript fails by the card's title: "same" always with one text,
// "twice" with one text on attempts 1 and 2 and then works, "changing"
// with a new text on each of attempts 1–5 and then works.
const repeatScript = `title=$(cat "$DROVER_WORKSPACE/../../../title-$DROVER_CARD_IDENTIFIER" 2>/dev/null)
case "$title:$DROVER_ATTEMPT" in
  same:*) echo "the gizmo relay refused the handshake" >&2; log_end; exit 4 ;;
  twice:1|twice:2) echo "widget cache is cold, try later" >&2; log_end; exit 4 ;;
  changing:1) w=alpha ;; changing:2) w=beta ;; changing:3) w=gamma ;; changing:4) w=delta ;; changing:5) w=epsilon ;;
  *) echo "done"; log_end; exit 0 ;;
esac
echo "the $w gadget would not warm up" >&2
log_end
exit 4
`

// TestSameFailureWithNothingChangedBlocksEarly: one card failing the same
// way three times in a row with nothing changed is blocked, saying so; a
// card failing twice and then working, and one whose failure changes on
// every attempt and works on the sixth, both reach review.
func TestSameFailureWithNothingChangedBlocksEarly(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{MaxConcurrent: 3}, repeatScript, backend)
		ids := map[string]string{}
		for _, title := range []string{"same", "twice", "changing"} {
			c := e.addCard(title)
			ids[title] = c.Identifier
			e.writeFile("title-"+c.Identifier, title)
		}
		e.start()
		for title, want := range map[string]string{"same": "blocked", "twice": "review", "changing": "review"} {
			id := ids[title]
			eventually(t, 60*time.Second, id+" ("+title+") in "+want, func() bool { return e.card(id).State == want })
		}
		same := e.card(ids["same"])
		if rs := e.runs(ids["same"]); len(rs) != 3 {
			t.Errorf("%s ran %d times, want 3 (blocked at the third identical failure)", ids["same"], len(rs))
		}
		br := same.BlockReason
		if br == nil || br.Kind != "repeated_failure" || !strings.Contains(br.What, "3 times in a row") ||
			!strings.Contains(br.What, "gizmo relay refused the handshake") || !strings.Contains(br.How, "drover card resume "+ids["same"]) {
			t.Errorf("block reason %+v, want repeated_failure naming the failure, the repeat and how to resume", br)
		}
		if len(same.GaveUp) > 0 && string(same.GaveUp) != "null" {
			t.Errorf("a repeat block is not a give-up: %s", same.GaveUp)
		}
		if rs := e.runs(ids["changing"]); len(rs) != 6 {
			t.Errorf("%s ran %d times, want 6", ids["changing"], len(rs))
		}
	})
}

// verifyAgent does the work only when its prompt shows why the last
// attempt was not done: the first attempt exits 0 having done nothing (and
// says it is done through drover's own call); the verify step finds the
// file missing; the next attempt's prompt carries that output, and the
// agent writes the file.
const verifyAgent = `#!/bin/sh
prompt=$(cat)
echo "$prompt" > "prompt-$DROVER_ATTEMPT.txt"
case "$prompt" in
  *"RESULT.txt is missing"*) echo "the answer is 42" > RESULT.txt ;;
  *) "$DROVER_BIN" run done --summary "all done, trust me" ;;
esac
echo "finished attempt $DROVER_ATTEMPT"
`

// TestDoneMeansVerified: an agent that exits 0 (and reports done) while the
// verify step fails is not done: the run is verify_failed, counted, with
// the checks' output on it; the next attempt's prompt carries that output;
// when that attempt passes the checks the card reaches review.
func TestDoneMeansVerified(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		w := wf{Profiles: "    checked: {kind: command, command: ./verify-agent.sh, prompt: stdin}\n", Default: "checked"}
		e := newEnv(t, w, "", backend)
		text := strings.Replace(w.render(), "---\nWork on", `verify:
  commands:
    - 'test -f RESULT.txt || { echo "RESULT.txt is missing: write the answer to it"; exit 1; }'
    - grep -q 42 RESULT.txt
  timeout: 30s
---
Work on`, 1)
		text += "{% if verify != \"\" %}The last attempt's checks failed:\n{{ verify }}\n{% endif %}"
		e.writeFile("WORKFLOW.md", text)
		if err := os.WriteFile(filepath.Join(e.dir, "verify-agent.sh"), []byte(verifyAgent), 0o755); err != nil {
			t.Fatal(err)
		}
		c := e.addCard("write the answer")
		e.start()
		eventually(t, 60*time.Second, c.Identifier+" in review", func() bool { return e.card(c.Identifier).State == "review" })
		var rs []struct {
			run
			Verify *struct {
				Passed  bool   `json:"passed"`
				Command string `json:"command"`
				Output  string `json:"output"`
			} `json:"verify"`
		}
		e.jsonOf(&rs, "runs", c.Identifier)
		if len(rs) != 2 {
			t.Fatalf("%d runs, want 2 (one not verified, one verified)", len(rs))
		}
		if a, b := rs[0], rs[1]; a.Attempt > b.Attempt {
			rs[0], rs[1] = b, a
		}
		first, second := rs[0], rs[1]
		if first.Kind != "verify_failed" || !first.Counted || first.Outcome != "failed" || first.Verify == nil || first.Verify.Passed ||
			!strings.Contains(first.Verify.Output, "RESULT.txt is missing") || !strings.Contains(first.Error, "RESULT.txt is missing") {
			t.Errorf("attempt 1 (exit 0, reported done, checks failed) = %+v verify %+v; want verify_failed, counted, with the checks' output", first.run, first.Verify)
		}
		if second.Kind != "succeeded" || second.Verify == nil || !second.Verify.Passed {
			t.Errorf("attempt 2 = %+v verify %+v; want succeeded and verified", second.run, second.Verify)
		}
		p2, err := os.ReadFile(filepath.Join(e.dir, ".drover/workspaces", c.Identifier, "prompt-2.txt"))
		if err != nil || !strings.Contains(string(p2), "RESULT.txt is missing: write the answer to it") {
			t.Errorf("attempt 2's prompt does not carry the checks' output (%v):\n%s", err, p2)
		}
		p1, _ := os.ReadFile(filepath.Join(e.dir, ".drover/workspaces", c.Identifier, "prompt-1.txt"))
		if strings.Contains(string(p1), "checks failed") {
			t.Errorf("attempt 1's prompt speaks of failed checks:\n%s", p1)
		}
	})
}
