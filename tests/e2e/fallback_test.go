package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

// chainScript is three profiles of one script (its first argument names
// the profile): first fails with a credit error while $CREDIT exists,
// middle always fails with a bad key, last does the work.
const chainScript = `case "$1" in
first) if [ -f "$CREDIT" ]; then echo 'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}' >&2; log_end; exit 1; fi ;;
middle) echo "Invalid API key · Please run /login" >&2; log_end; exit 1 ;;
esac
echo "done by $1 on $DROVER_CARD_IDENTIFIER"
log_end
`

const chainProfiles = `    first: {kind: command, command: ./agent.sh, args: [first], prompt: stdin, fallback: [middle, last]}
    middle: {kind: command, command: ./agent.sh, args: [middle], prompt: stdin}
    last: {kind: command, command: ./agent.sh, args: [last], prompt: stdin}
`

// TestFallbackCarriesTheBoardWhileAProfileIsHeld: the first profile is
// held by a credit error and the middle link of its chain by a bad key;
// its cards finish on the last link, each run saying why; a card labelled
// no-fallback waits; once the first profile is resumed the waiting card and
// new cards run on it again; no card spends more than its budget. On
// PostgreSQL with two nodes.
func TestFallbackCarriesTheBoardWhileAProfileIsHeld(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		w := wf{MaxConcurrent: 2, Default: "first", Profiles: chainProfiles, Node: "n1"}
		e := newEnv(t, w, chainScript, backend)
		credit := filepath.Join(e.dir, "credit")
		e.writeFile("credit", "gone")
		nodes := e.fleet(w, backend, "CREDIT="+credit+"\n"+chainScript)
		var cards []card
		for i := range 6 {
			cards = append(cards, e.addCard(fmt.Sprintf("card %d", i)))
		}
		pinned := e.addCard("pinned", "--label", "no-fallback")
		for _, n := range nodes {
			n.start()
		}
		e.allIn(60*time.Second, "review", cards)
		ag := e.agents()
		// A credit error holds its profile with a probe to come (open); a
		// bad key pauses it until an operator.
		if ag["first"].State != "open" || ag["middle"].State != "paused" || ag["last"].State != "closed" {
			t.Errorf("profiles first %s, middle %s, last %s; want open (held for credit), paused, closed", ag["first"].State, ag["middle"].State, ag["last"].State)
		}
		if ls := e.ok("agent", "ls"); !strings.Contains(ls, "first falls back to middle, then last while it is held") {
			t.Errorf("drover agent ls does not show first's chain:\n%s", ls)
		}
		for _, c := range cards {
			rs := e.runsInOrder(c.Identifier)
			done := rs[len(rs)-1]
			if done.Agent != "last" || done.Outcome != "succeeded" {
				t.Errorf("%s's last run %s/%s on %s; want succeeded on last", c.Identifier, done.Outcome, done.Kind, done.Agent)
			}
			if len(rs) > 3 {
				t.Errorf("%s ran %d times; at most one on each profile of the chain", c.Identifier, len(rs))
			}
			for _, r := range rs {
				if r.Counted {
					t.Errorf("%s's run %s on %s (%s) counted toward the card's budget", c.Identifier, r.ID, r.Agent, r.Kind)
				}
			}
			said := false
			for _, ev := range e.events(c.Identifier) {
				if ev.Type == "claimed" && ev.RunID == done.ID {
					said = strings.Contains(ev.Reason, "first held") && strings.Contains(ev.Reason, "ran on last")
				}
			}
			if !said {
				t.Errorf("%s's claim of run %s on last does not say why it ran there: %+v", c.Identifier, done.ID, e.events(c.Identifier))
			}
		}
		p := e.card(pinned.Identifier)
		if p.State != "ready" {
			t.Errorf("the no-fallback card is %s (%s), want waiting in ready", p.State, p.StateReason)
		}
		for _, r := range e.runs(pinned.Identifier) {
			if r.Agent != "first" {
				t.Errorf("the no-fallback card ran on %s", r.Agent)
			}
		}
		explain := e.ok("explain", pinned.Identifier)
		for _, want := range []string{"fallback first → middle → last", "label no-fallback keeps it on first"} {
			if !strings.Contains(explain, want) {
				t.Errorf("explain of the waiting card does not say %q:\n%s", want, explain)
			}
		}

		// Credit comes back: the first profile is resumed and takes the
		// waiting card and new cards again.
		if err := os.Remove(credit); err != nil {
			t.Fatal(err)
		}
		e.ok("agent", "resume", "first")
		fresh := []card{e.addCard("after 1"), e.addCard("after 2"), pinned}
		e.allIn(60*time.Second, "review", fresh)
		for _, c := range fresh {
			rs := e.runsInOrder(c.Identifier)
			if r := rs[len(rs)-1]; r.Agent != "first" {
				t.Errorf("%s ran on %s after first was resumed, want first", c.Identifier, r.Agent)
			}
		}
	})
}

// TestLabelRoutesAndProfileCapsAcrossNodes: cards labelled docs run on the
// profile agents.routes names, the others on the default; that profile's
// max_concurrent of 1 holds across two nodes (PostgreSQL) though each has
// free slots; explain says which rule chose the profile.
func TestLabelRoutesAndProfileCapsAcrossNodes(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		script := `if [ "$1" = capped ]; then sleep 0.6; fi
echo "done by ${1:-script}"
log_end
`
		w := wf{MaxConcurrent: 3, Node: "n1",
			Profiles: "    capped: {kind: command, command: ./agent.sh, args: [capped], prompt: stdin, max_concurrent: 1}\n",
			Agents:   "  routes:\n    - {labels: [docs], profile: capped}\n"}
		e := newEnv(t, w, script, backend)
		nodes := e.fleet(w, backend, script)
		docs := map[string]bool{}
		var all []card
		for i := range 4 {
			c := e.addCard(fmt.Sprintf("docs %d", i), "--label", "Docs")
			docs[c.Identifier] = true
			all = append(all, c, e.addCard(fmt.Sprintf("code %d", i)))
		}
		explain := e.ok("explain", all[0].Identifier)
		if !strings.Contains(explain, "agent capped (agents.routes[0] (label docs))") {
			t.Errorf("explain of a docs card does not say the route chose capped:\n%s", explain)
		}
		for _, n := range nodes {
			n.start()
		}
		e.allIn(60*time.Second, "review", all)
		for _, c := range all {
			want := "script"
			if docs[c.Identifier] {
				want = "capped"
			}
			for _, r := range e.runs(c.Identifier) {
				if r.Agent != want {
					t.Errorf("%s ran on %s, want %s", c.Identifier, r.Agent, want)
				}
			}
		}
		// The capped runs' start and end marks never interleave.
		live, most := 0, 0
		for _, l := range sortedSide(e.sideLines()) {
			if !docs[l.ID] {
				continue
			}
			if l.What == "start" {
				live++
			} else {
				live--
			}
			most = max(most, live)
		}
		if most != 1 {
			t.Errorf("at most %d capped runs were live at once, want exactly 1 (max_concurrent 1 across the nodes)", most)
		}
	})
}

// sortedSide is the side-channel lines in time order.
func sortedSide(ls []sideLine) []sideLine {
	out := append([]sideLine(nil), ls...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}
