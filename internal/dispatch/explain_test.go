package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Two cards that wait on each other (written before the store refused
// cycles): explain names the cycle and how to break it.
func TestExplainNamesABlockerCycle(t *testing.T) {
	w := newWorld(t, 3)
	ctx := context.Background()
	a, b := w.add("a", "sim", `{}`), w.add("b", "sim", `{}`)
	for _, p := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}} {
		c, err := w.st.GetCard(ctx, p[0])
		if err != nil {
			t.Fatal(err)
		}
		c.BlockedBy = []string{p[1]}
		if err := w.st.Apply(ctx, store.Change{Card: &c}); err != nil { // no CheckBlockers: legacy data
			t.Fatal(err)
		}
	}
	e, err := Explain(ctx, w.st, w.cfg, a.Identifier, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := "cycle (" + a.Identifier + " → " + b.Identifier + " → " + a.Identifier + ")"
	for _, c := range e.Checks {
		if c.Name == "blockers done" {
			if c.OK || !strings.Contains(c.Hint, want) || !strings.Contains(c.Hint, "drover card edit "+a.Identifier+" --blocked-by") {
				t.Fatalf("blockers check %+v: want it failed, naming the %s and how to break it", c, want)
			}
			return
		}
	}
	t.Fatalf("no blockers check in %+v", e.Checks)
}

// While a half-open profile waits for its probe, explain names the probe
// card as operators know it (DRV-n), never by its internal id.
func TestExplainNamesTheProbeCardByIdentifier(t *testing.T) {
	w := newWorld(t, 3)
	ctx := context.Background()
	probe, waiting := w.add("probe", "sim", `{}`), w.add("waiting", "sim", `{}`)
	now := time.Now()
	until := now.Add(-time.Second)
	st := policy.StartProbe(policy.BreakerState{State: policy.BreakerOpen, Kind: policy.KindProviderUnavailable, Since: &now, Until: &until},
		policy.CardRef{ID: probe.ID, Identifier: probe.Identifier})
	if err := w.st.Apply(ctx, store.Change{AgentState: agentState("sim", st, 0, now)}); err != nil {
		t.Fatal(err)
	}
	e, err := Explain(ctx, w.st, w.cfg, waiting.Identifier, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e.Checks {
		if strings.Contains(c.Hint, "probe card") {
			if !strings.Contains(c.Hint, "probe card "+probe.Identifier) || strings.Contains(c.Hint, probe.ID) {
				t.Fatalf("check %+v: want the probe named %s, not %s", c, probe.Identifier, probe.ID)
			}
			return
		}
	}
	t.Fatalf("no check names the probe card: %+v", e.Checks)
}

// TestExplainSaysWhatTheNextAttemptHas: a card that failed and waits on its
// retry has nothing new until a person gives it something: explain says
// so, then names the comment, then the edited title.
func TestExplainSaysWhatTheNextAttemptHas(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(5).Set("policy", "backoff: {base: 1h, max: 1h, jitter: 0}"))
	ctx := context.Background()
	c := w.add("fails once", "sim", `{"sim":["unknown","succeeded"]}`)
	d := w.dispatcher("n1")
	stop := w.run(d)
	w.waitFor(c.Identifier, "waiting on its retry", func(c board.Card) bool { return c.NextAttemptAt != nil && c.Claim == nil })
	stop()
	fresh := func() *Fresh {
		t.Helper()
		e, err := Explain(ctx, w.st, w.cfg, c.Identifier, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if e.Fresh == nil {
			t.Fatalf("explain of a card waiting on its retry has no next_attempt_new: %+v", e)
		}
		return e.Fresh
	}
	if f := fresh(); len(f.Changed) != 0 || !strings.Contains(f.Text, "nothing new since attempt 1") || f.Repeats != 1 || f.RepeatCap != 3 {
		t.Errorf("before any change: %+v", f)
	}
	if _, err := w.ops.Comment(ctx, c.ID, "the fixture moved to testdata/v2"); err != nil {
		t.Fatal(err)
	}
	if f := fresh(); len(f.Changed) != 1 || !strings.Contains(f.Text, "something new") || !strings.Contains(f.Changed[0], "comment") {
		t.Errorf("after a comment: %+v", f)
	}
	title := "fails once, now with a better title"
	if _, err := w.ops.Edit(ctx, c.ID, operator.Input{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if f := fresh(); len(f.Changed) != 2 || !strings.Contains(f.Changed[0], "the card's title, body, spec or labels") {
		t.Errorf("after a title edit: %+v", f)
	}
}
