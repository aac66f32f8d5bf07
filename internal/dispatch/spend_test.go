package dispatch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// A run that crosses the card's spend cap is stopped and the card blocked
// with a reason; it is not retried.
func TestCardSpendCapStopsAndBlocks(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(5).Set("limits", "{max_cost_per_card_usd: 0.25}"))
	c := w.add("expensive", "", `{"sim":["agent_failed"],"sim_cost_usd":0.2,"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	got := w.waitFor(c.Identifier, "blocked", inState("blocked"))
	rs := w.runs(c.ID)
	if got.BlockReason == nil || got.BlockReason.Kind != "spend_limit" {
		t.Fatalf("block reason = %+v", got.BlockReason)
	}
	if len(rs) != 2 {
		t.Fatalf("runs = %s; want 2 ($0.20 each; the second crosses $0.25 and nothing runs after it)", attempts(rs))
	}
}

// Over the day cap, new dispatch pauses: eligible cards stay untouched and
// one spend_paused notification is queued.
func TestDayCapPausesDispatch(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(5).Set("limits", "{max_cost_per_day_usd: 0.15}"))
	a := w.add("first", "", `{"sim":["succeeded"],"sim_cost_usd":0.2,"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	w.waitFor(a.Identifier, "review", inState("review"))
	b := w.add("second", "", `{"sim":["succeeded"],"sim_delay":"1ms"}`)
	w.waitFor(b.Identifier, "still ready", func(c board.Card) bool {
		ob, _ := w.st.ListOutbox(context.Background(), store.OutboxFilter{})
		for _, o := range ob {
			if o.Event == "spend_paused" {
				return c.State == "ready"
			}
		}
		return false
	})
	stop()
	if rs := w.runs(b.ID); len(rs) != 0 {
		t.Fatalf("a card ran over the day cap: %s", attempts(rs))
	}
}

// The run a spend cap stops ends with an outcome of its own (never "" with
// finished_at set), and the block reason states what the card's runs of the
// retry epoch really cost, the stopped run included (issue 13, item 1).
func TestSpendCapStopEndsTheRunAndStatesTheRealSpend(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(5).Set("limits", "{max_cost_per_card_usd: 0.15}"))
	c := w.add("expensive", "", `{"sim":["agent_failed","agent_failed","succeeded"],"sim_cost_usd":0.1,"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	got := w.waitFor(c.Identifier, "blocked", inState("blocked"))
	stop()
	rs := w.runs(c.ID)
	if len(rs) != 2 {
		t.Fatalf("runs = %s; want 2", attempts(rs))
	}
	for _, r := range rs {
		if r.Open() || r.FinishedAt == nil {
			t.Fatalf("run %d has no outcome after the spend stop: %+v", r.Attempt, r)
		}
	}
	last := rs[len(rs)-1]
	if last.Outcome != board.OutcomeBlocked || last.Kind != "spend_limit" {
		t.Fatalf("the stopped run = outcome %q kind %q; want blocked / spend_limit", last.Outcome, last.Kind)
	}
	if got.BlockReason == nil || !strings.Contains(got.BlockReason.What, "$0.20") {
		t.Fatalf("block reason must state the $0.20 the two runs cost: %+v", got.BlockReason)
	}
}

// The scenario (issue 13, item 13): a day cap of $0.25, cards that
// cost $0.10 each and four slots. Runs in flight reserve an estimate, so new
// claims stop before the day would pass the cap: the day spends $0.20 (two
// runs; a third would reach $0.30), and the other cards wait in their
// eligible column, neither blocked nor counted, with a reason naming the
// next spend day.
func TestDayCapReservesRunsInFlight(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(5).Set("limits", "{max_cost_per_day_usd: 0.25}"))
	var cards []board.Card
	for i := range 8 {
		cards = append(cards, w.add(fmt.Sprintf("card %d", i), "", `{"sim":["succeeded"],"sim_cost_usd":0.1,"sim_delay":"300ms"}`))
	}
	stop := w.run(w.dispatcher("n1"))
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for {
		open, _ := w.st.ListRuns(ctx, store.RunFilter{Open: store.Bool(true)})
		ob, _ := w.st.ListOutbox(ctx, store.OutboxFilter{})
		paused := false
		for _, o := range ob {
			paused = paused || o.Event == "spend_paused"
		}
		if paused && len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the day cap to pause dispatch with no run in flight")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a few more ticks: nothing new may start
	stop()
	spent, err := w.st.Spend(ctx, time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if spent > 0.25+1e-9 {
		t.Fatalf("the day spent $%.2f against a $0.25 cap; runs in flight must reserve their estimate", spent)
	}
	if spent < 0.2-1e-9 {
		t.Fatalf("the day spent $%.2f; two $0.10 runs fit under $0.25", spent)
	}
	waiting := 0
	for _, c := range cards {
		got, _ := w.st.GetCard(ctx, c.ID)
		switch {
		case got.State == "ready" && len(w.runs(c.ID)) == 0:
			waiting++
			ex, err := Explain(ctx, w.st, w.cfg, got.Identifier, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(fmt.Sprint(ex), "next spend day") {
				t.Fatalf("explain of a deferred card must say it waits for the next spend day: %+v", ex)
			}
		case got.State == "review":
		default:
			t.Fatalf("%s is %s with runs %s; want review or untouched in ready", got.Identifier, got.State, attempts(w.runs(c.ID)))
		}
	}
	if waiting != 6 {
		t.Fatalf("%d cards wait for the next day; want 6", waiting)
	}
}
