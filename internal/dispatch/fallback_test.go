package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// pauseProfile pauses profile in w's store, as a credit error would.
func pauseProfile(t *testing.T, w *world, profile string) {
	t.Helper()
	paused := policy.BreakerState{State: policy.BreakerPaused, Kind: policy.KindQuotaExhausted, Reason: "credit gone"}
	if err := w.st.Apply(context.Background(), store.Change{AgentState: agentState(profile, paused, -1, time.Now())}); err != nil {
		t.Fatal(err)
	}
}

// TestFallbackSkipsALinkTheCardDoesNotFit: a card whose spec fits its own
// profile but not the fallback's spec_schema is not blocked while its own
// profile is held: it waits, and runs on its own profile once resumed.
func TestFallbackSkipsALinkTheCardDoesNotFit(t *testing.T) {
	wf := worldWorkflow(3).Set("agents", "default: sim\nprofiles:\n  sim: {kind: sim, fallback: [other]}\n  other: {kind: sim, spec_schema: {type: object, required: [plan]}}").Prompt("")
	w := newWorldFrom(t, wf)
	w.ops.Agents = []string{"sim", "other"}
	pauseProfile(t, w, "sim")
	c := w.add("Fix", "", `{"sim": ["succeeded"]}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	time.Sleep(time.Second)
	if got, _ := w.st.GetCard(context.Background(), c.ID); got.BlockReason != nil || len(w.runs(c.ID)) != 0 {
		t.Fatalf("while sim is paused the card is %s (%+v) with %d runs; want it waiting, unblocked", got.State, got.BlockReason, len(w.runs(c.ID)))
	}
	e, err := Explain(context.Background(), w.st, w.cfg, c.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if e.RunsOn != "" {
		t.Errorf("explain says the card runs on %q, a link its input does not fit", e.RunsOn)
	}
	if _, err := w.ops.ResumeAgent(context.Background(), "sim"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(c.ID, "review", inState("review"))
	if rs := w.runs(c.ID); len(rs) != 1 || rs[0].Agent != "sim" {
		t.Errorf("runs %s, want one on sim", attempts(rs))
	}
}

// TestExplainSkipsALinkNoNodeCanRun: with the first link of the chain not
// runnable here, offer runs the card on the second link, and explain says
// the same of a card like it.
func TestExplainSkipsALinkNoNodeCanRun(t *testing.T) {
	wf := worldWorkflow(3).Set("agents", "default: sim\nprofiles:\n  sim: {kind: sim, fallback: [ghost, other]}\n  ghost: {kind: command, command: /nonexistent/drover-ghost}\n  other: {kind: sim}").Prompt("")
	w := newWorldFrom(t, wf)
	w.ops.Agents = []string{"sim", "other", "ghost"}
	pauseProfile(t, w, "sim")
	a := w.add("A", "", `{"sim": ["succeeded"]}`)
	stop := w.run(w.dispatcher("n1"))
	w.waitFor(a.ID, "review", inState("review"))
	stop()
	ran := w.runs(a.ID)[0].Agent
	b := w.add("B", "", `{"sim": ["succeeded"]}`)
	e, err := Explain(context.Background(), w.st, w.cfg, b.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if ran != "other" || e.RunsOn != "other" {
		t.Errorf("A ran on %q and explain says B runs on %q (%s); want other for both", ran, e.RunsOn, e.RunsOnWhy)
	}
}

// TestProbeOrderKeysOnTheProfileACardRunsOn: other's hold is due a probe,
// sim is paused and falls back to other. The sim card comes first on the
// board but its last run on other showed the held failure: the probe goes
// to the other card.
func TestProbeOrderKeysOnTheProfileACardRunsOn(t *testing.T) {
	wf := worldWorkflow(3).Set("agents", "default: sim\nprofiles:\n  sim: {kind: sim, fallback: [other]}\n  other: {kind: sim}").Prompt("")
	w := newWorldFrom(t, wf)
	w.ops.Agents = []string{"sim", "other"}
	ctx := context.Background()
	now := time.Now()
	past := now.Add(-time.Minute)
	c1 := w.add("sim card", "", `{}`)
	c2 := w.add("other card", "other", `{}`)
	for _, c := range []struct{ id, fp string }{{c1.ID, "fp-held"}, {c2.ID, "fp-else"}} {
		cur, _ := w.st.GetCard(ctx, c.id)
		run := board.Run{CardID: c.id, Attempt: 1, RetryEpoch: cur.RetryEpoch, Agent: "other", ClaimedAt: past, Fingerprint: c.fp}
		if err := w.st.Apply(ctx, store.Change{NewRun: &run}); err != nil {
			t.Fatal(err)
		}
	}
	bs := map[string]breaker{
		"sim":   {BreakerState: policy.BreakerState{State: policy.BreakerPaused, Reason: "credit"}},
		"other": {BreakerState: policy.BreakerState{State: policy.BreakerOpen, Until: &past, Fingerprint: "fp-held", Reason: "hold"}},
	}
	cards := []board.Card{c1, c2}
	for i := range cards {
		cards[i], _ = w.st.GetCard(ctx, cards[i].ID)
	}
	ps := &pass{now: now, breakers: bs, probing: map[string]bool{}, live: map[string]int{}, usable: &usability{}, node: &self{}}
	out := probeOrder(ctx, w.st, cards, bs, now, func(c board.Card) string { return ps.choose(w.cfg, c).profile })
	if out[0].ID != c2.ID {
		t.Errorf("probe order %s, %s; want the card whose last run did not show the held failure first", out[0].Title, out[1].Title)
	}
}
