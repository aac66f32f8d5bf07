package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

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
