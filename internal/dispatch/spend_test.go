package dispatch

import (
	"context"
	"strings"
	"testing"

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
