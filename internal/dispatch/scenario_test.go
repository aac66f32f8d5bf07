package dispatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// A card that always fails runs exactly max_attempts times with attempts
// 1..N, ends blocked with a give-up stamp, and produces one notification.
func TestAlwaysFailingCardGivesUpAtMaxAttempts(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("always fails", "", `{"sim":["agent_failed"],"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	got := w.waitFor(c.Identifier, "blocked", inState("blocked"))
	stop()
	rs := w.runs(c.ID)
	if attempts(rs) != "1:failed:agent_failed 2:failed:agent_failed 3:failed:agent_failed" {
		t.Fatalf("runs = %s", attempts(rs))
	}
	if got.GaveUp == nil || got.GaveUp.Attempts != 3 || got.GaveUp.Kind != "agent_failed" || got.Claim != nil {
		t.Fatalf("card = %+v (gave_up %+v)", got, got.GaveUp)
	}
	ob, _ := w.st.ListOutbox(context.Background(), store.OutboxFilter{CardID: c.ID})
	if len(ob) != 1 || ob[0].Event != policy.NotifyGaveUp {
		t.Fatalf("outbox = %+v, want one gave_up row", ob)
	}
}

// A restart between attempts changes nothing: attempt numbers continue from
// the stored runs and the budget is not reset.
func TestRestartKeepsAttemptsAndBudget(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("fails, restart between", "", `{"sim":["agent_failed"],"sim_delay":"1ms"}`)
	for i := 0; i < 3; i++ {
		stop := w.run(w.dispatcher("n1"))
		want := i + 1
		w.waitFor(c.Identifier, "attempt routed", func(board.Card) bool {
			n := 0
			for _, r := range w.runs(c.ID) {
				if !r.Open() {
					n++
				}
			}
			return n >= want
		})
		stop()
	}
	got := w.waitFor(c.Identifier, "blocked", inState("blocked"))
	if a := attempts(w.runs(c.ID)); a != "1:failed:agent_failed 2:failed:agent_failed 3:failed:agent_failed" {
		t.Fatalf("runs across restarts = %s", a)
	}
	if got.GaveUp == nil {
		t.Fatal("no give-up stamp")
	}
}

// Invalid input: one block, zero runs (no agent session), no release.
func TestInvalidInputBlocksOnceBeforeAnySession(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("no plan", "planner", `{"sim":["succeeded"]}`)
	stop := w.run(w.dispatcher("n1"))
	got := w.waitFor(c.Identifier, "blocked", inState("blocked"))
	time.Sleep(300 * time.Millisecond) // a few more ticks must not touch it again
	stop()
	if rs := w.runs(c.ID); len(rs) != 0 {
		t.Fatalf("runs = %s, want none", attempts(rs))
	}
	blocks := 0
	for _, e := range w.events(c.ID) {
		switch e.Type {
		case board.EvBlocked:
			blocks++
		case board.EvReleased, board.EvClaimed:
			t.Fatalf("event %s on an invalid card", e.Type)
		}
	}
	if blocks != 1 || got.BlockReason == nil || got.BlockReason.Kind != "invalid_input" {
		t.Fatalf("blocks = %d, reason %+v", blocks, got.BlockReason)
	}
	if want := "drover card resume " + c.Identifier; !contains(got.BlockReason.How, want) || !contains(got.BlockReason.What, "plan") {
		t.Fatalf("reason does not name the field and the resume command: %+v", got.BlockReason)
	}
	// Fix the input and resume: it runs.
	spec := []byte(`{"sim":["succeeded"],"plan":"p"}`)
	raw := spec
	if _, err := w.ops.Edit(context.Background(), c.ID, inputSpec(raw)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ops.Resume(context.Background(), c.ID); err != nil {
		t.Fatal(err)
	}
	stop = w.run(w.dispatcher("n1"))
	defer stop()
	w.waitFor(c.Identifier, "review", inState("review"))
}

// A stale owner whose claim was taken over writes nothing to the card: its
// run is recorded as lease_lost.
func TestStaleOwnerWritesNothing(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("taken over", "", `{}`)
	d := w.dispatcher("n1")
	ctx := context.Background()
	cur := w.claimNoRun(d, c)
	stale := *cur.Claim
	open := w.runs(c.ID)[0]
	// Another node recovers the card (its lease "expired").
	other := cur
	other.Claim = &board.Claim{Owner: "n2", Epoch: cur.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
	if err := w.st.Apply(ctx, store.Change{Card: &other, ClaimGuard: &stale}); err != nil {
		t.Fatal(err)
	}
	before, _ := w.st.GetCard(ctx, c.ID)
	if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: stale, run: open, cls: policy.Classification{Kind: policy.KindSucceeded}}); err != nil {
		t.Fatal(err)
	}
	after, _ := w.st.GetCard(ctx, c.ID)
	run, _ := w.st.GetRun(ctx, open.ID)
	if after.Version != before.Version || after.State != before.State || run.Outcome != board.OutcomeLeaseLost {
		t.Fatalf("stale owner changed the card (v%d→v%d, %s→%s) or run outcome is %q", before.Version, after.Version, before.State, after.State, run.Outcome)
	}
}

// An operator cancelling a card mid-run stops the agent; the run is
// cancelled and the card stays where the operator put it.
func TestOperatorCancelStopsTheRun(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("long", "", `{"sim":["succeeded"],"sim_delay":"30s"}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	w.waitFor(c.Identifier, "running", func(c board.Card) bool { return c.Claim != nil })
	if _, err := w.ops.Cancel(context.Background(), c.ID, "not needed"); err != nil {
		t.Fatal(err)
	}
	got := w.waitFor(c.Identifier, "claim released", func(c board.Card) bool { return c.Claim == nil })
	rs := w.runs(c.ID)
	if got.State != "cancelled" || len(rs) != 1 || rs[0].Outcome != board.OutcomeCancelled {
		t.Fatalf("state %s, runs %s", got.State, attempts(rs))
	}
	if !contains(rs[0].Error, "an operator cancelled "+c.Identifier) {
		t.Fatalf("run error = %q", rs[0].Error)
	}
}

// A provider outage opens the profile's breaker; no healthy card is blocked.
func TestProviderOutageOpensBreakerWithoutBlocking(t *testing.T) {
	w := newWorld(t, 3)
	var cards []board.Card
	for i := 0; i < 4; i++ {
		cards = append(cards, w.add("outage", "", `{"sim":["provider_unavailable","succeeded"],"sim_delay":"1ms"}`))
	}
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	for _, c := range cards {
		got := w.waitFor(c.Identifier, "review", inState("review"))
		if got.GaveUp != nil {
			t.Fatalf("%s gave up during an outage", c.Identifier)
		}
	}
	evs, _ := w.st.ListEvents(context.Background(), store.EventFilter{})
	opened := false
	for _, e := range evs {
		if e.Type == "agent_open" {
			opened = true
		}
	}
	if !opened {
		t.Fatal("three provider_unavailable failures in the window did not open the breaker")
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

var _ = errors.Is

// An operator moving a running card into done stops the agent too: the run
// is recorded as cancelled and the card stays done.
func TestOperatorMoveToDoneStopsTheRun(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("long", "", `{"sim":["agent_failed"],"sim_delay":"30s"}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	w.waitFor(c.Identifier, "running", func(c board.Card) bool { return c.Claim != nil })
	if _, err := w.ops.Move(context.Background(), c.ID, "done", "finished by hand"); err != nil {
		t.Fatal(err)
	}
	got := w.waitFor(c.Identifier, "claim released", func(c board.Card) bool { return c.Claim == nil })
	rs := w.runs(c.ID)
	if got.State != "done" || len(rs) != 1 || rs[0].Outcome != board.OutcomeCancelled {
		t.Fatalf("state %s, runs %s", got.State, attempts(rs))
	}
	// The run says what happened: a move to done, not a cancel (issue 13).
	if !contains(rs[0].Error, "an operator moved "+c.Identifier+" to done") || contains(rs[0].Error, "cancelled") {
		t.Fatalf("run error = %q; want the move to done named", rs[0].Error)
	}
}

// A node that restarts with many runs live takes them all back in one
// pass (prepared side by side, routed in one transaction): every old run
// is recorded interrupted once, and every card runs again and finishes.
func TestRestartTakesBackManyRunsAtOnce(t *testing.T) {
	w := newWorld(t, 3)
	const n = 12 // more than recoverWorkers: several are prepared at once
	old := w.dispatcher("n1")
	var cards []board.Card
	for i := range n {
		c := w.add(fmt.Sprint("live ", i), "", `{"sim":["succeeded"],"sim_delay":"1ms"}`)
		w.claimNoRun(old, c)
		cards = append(cards, c)
	}
	stop := w.run(w.dispatcher("n1")) // the same node, restarted
	defer stop()
	for _, c := range cards {
		w.waitFor(c.Identifier, "review", inState("review"))
	}
	for _, c := range cards {
		rs := w.runs(c.ID)
		var interrupted, succeeded int
		for _, r := range rs {
			switch r.Outcome {
			case board.OutcomeInterrupted:
				interrupted++
				if !contains(r.Error, "n1 restarted while the run was live") {
					t.Errorf("%s: the interrupted run says %q", c.Identifier, r.Error)
				}
			case board.OutcomeSucceeded:
				succeeded++
			}
		}
		if interrupted != 1 || succeeded != 1 || len(rs) != 2 {
			t.Errorf("%s: runs %s; want one interrupted, then one succeeded", c.Identifier, attempts(rs))
		}
	}
}

// A node that dies after its agents finished alike on several cards (one
// unseen failure, numbers apart) is taken back in one pass: the runs'
// verdicts come from their logs, the same fingerprint on three cards holds
// the profile during recovery itself, no recovered run is counted against
// its card, no card gives up, and once a probe succeeds every card runs
// again and finishes.
func TestRecoveredRunsThatFailedAlikeHoldTheProfile(t *testing.T) {
	w := newWorld(t, 2) // two counted failures would give a card up
	old := w.dispatcher("n1")
	var cards []board.Card
	for i := range 5 {
		c := w.add(fmt.Sprint("finished before the node died ", i), "", `{"sim":["succeeded"],"sim_delay":"1ms"}`)
		c = w.claimNoRun(old, c)
		rs := w.runs(c.ID)
		if len(rs) != 1 {
			t.Fatalf("%s: runs %s; want one open run", c.Identifier, attempts(rs))
		}
		// The agent started, printed its failure and exited, as agent/proc
		// logs it; then the node died before routing it.
		path := filepath.Join(w.dir, "logs", rs[0].ID+".log")
		log := fmt.Sprintf("starting\n[stderr] tenant %d workspace frozen pending review (ticket 88%d3)\n[drover: exit code 3 after 1.%ds]\n", 4820+i, i, i)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if err := w.st.Apply(t.Context(), store.Change{Progress: []store.RunProgress{{RunID: rs[0].ID, StartedAt: &now, LogPath: path}}}); err != nil {
			t.Fatal(err)
		}
		cards = append(cards, c)
	}
	stop := w.run(w.dispatcher("n1")) // the same node, restarted
	defer stop()
	for _, c := range cards {
		w.waitFor(c.Identifier, "review", inState("review"))
	}
	var held bool
	for _, c := range cards {
		rs := w.runs(c.ID)
		if len(rs) < 2 || rs[len(rs)-1].Outcome != board.OutcomeSucceeded {
			t.Errorf("%s: runs %s; want the recovered failure, then a success", c.Identifier, attempts(rs))
			continue
		}
		first := rs[0]
		if first.Outcome == board.OutcomeSucceeded || !contains(first.Error, "frozen pending review") {
			t.Errorf("%s: the recovered run is %s (%q); want the failure its log recorded", c.Identifier, first.Outcome, first.Error)
		}
		// The hold uncounts the runs that showed the failure before it,
		// as well as those routed after it.
		if first.Counted {
			t.Errorf("%s: the recovered run stays counted against the card though its profile was held for its failure: %s", c.Identifier, first.Decision)
		}
		held = held || contains(first.Decision, "held")
		for _, e := range w.events(c.ID) {
			if e.Type == board.EvGaveUp {
				t.Errorf("%s gave up: %s", c.Identifier, e.Reason)
			}
		}
	}
	if !held {
		for _, c := range cards {
			t.Logf("%s: %s", c.Identifier, attempts(w.runs(c.ID)))
			for _, r := range w.runs(c.ID) {
				t.Logf("   counted=%v fp=%s decision=%s", r.Counted, r.Fingerprint, r.Decision)
			}
		}
		t.Fatal("no recovered run's decision says the profile was held for the failure five cards shared")
	}
}

// A rate limit that says to come back in two hours holds the profile at
// the first card that meets it: the breaker opens at once until then,
// naming the wait, and the other cards are not claimed only to meet it too
// (before, three cards each ran and failed, the breaker's threshold).
func TestALongRetryAfterHoldsTheProfileAtOnce(t *testing.T) {
	wf := worldWorkflow(3).Set("dispatch", "{node: n1, lease: 3s, poll_interval: 100ms, max_concurrent: 1}")
	w := newWorldFrom(t, wf)
	var cards []board.Card
	for i := range 3 {
		cards = append(cards, w.add(fmt.Sprint("limited ", i), "", `{"sim":["rate_limited","succeeded"],"sim_reset":"2h","sim_delay":"1ms"}`))
	}
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	var opened *board.Event
	for deadline := time.Now().Add(10 * time.Second); opened == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		evs, _ := w.st.ListEvents(context.Background(), store.EventFilter{})
		for i, e := range evs {
			if e.Type == "agent_open" {
				opened = &evs[i]
			}
		}
	}
	if opened == nil {
		t.Fatal("a retry-after of two hours did not open the profile's breaker")
	}
	if !contains(opened.Reason, "the provider asks to wait 2h") {
		t.Errorf("the breaker opened for %q; want the stated wait named", opened.Reason)
	}
	time.Sleep(time.Second) // ten poll intervals: time to claim the others, were they eligible
	var ran []string
	for _, c := range cards {
		for _, r := range w.runs(c.ID) {
			ran = append(ran, c.Identifier+":"+r.Kind)
		}
	}
	if len(ran) != 1 || !contains(ran[0], ":rate_limited") {
		t.Errorf("runs %v; want one, rate_limited, and no other card claimed while the wait lasts", ran)
	}
}
