package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

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
