package sqlstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// A routing guarded on a profile's breaker version is refused when another
// node writes that breaker meanwhile. With a row already there, FOR SHARE
// waits for the writer and sees its version; with no row yet (a profile
// whose breaker was never written), the guard's insert of the closed row
// waits for the writer's insert, and sees it.
func TestAgentGuardRacesTheFirstBreakerWrite(t *testing.T) {
	for _, withRow := range []bool{true, false} {
		name := "no row"
		if withRow {
			name = "row exists"
		}
		t.Run(name, func(t *testing.T) {
			dsn := testkit.DSN(t, testkit.Postgres)
			a, b := testkit.Open(t, dsn), testkit.Open(t, dsn)
			ctx := t.Context()
			ev := func(r string) []board.Event { return []board.Event{{Type: "agent_x", Reason: r}} }
			var v int64
			if withRow {
				st := store.AgentState{Name: "p", State: "closed", Version: 0}
				if err := a.Apply(ctx, store.Change{AgentState: &st, Events: ev("row")}); err != nil {
					t.Fatal(err)
				}
				as, _ := a.ListAgentStates(ctx)
				v = as[0].Version
			}
			entered, release := make(chan struct{}), make(chan struct{})
			a.HoldNextCommitForTest(entered, release)
			hold := make(chan error, 1)
			go func() {
				st := store.AgentState{Name: "p", State: "open", Reason: "held", Version: v}
				hold <- a.Apply(ctx, store.Change{AgentState: &st, Events: ev("hold")})
			}()
			<-entered
			counted := make(chan error, 1)
			go func() {
				counted <- b.Apply(ctx, store.Change{AgentGuard: &store.AgentGuard{Name: "p", Version: v}, Events: ev("counted")})
			}()
			time.Sleep(300 * time.Millisecond)
			close(release)
			if err := <-hold; err != nil {
				t.Fatal(err)
			}
			if err := <-counted; !errors.Is(err, store.ErrConflict) {
				t.Errorf("the guarded change = %v, want ErrConflict: it was decided on the breaker before the hold", err)
			}
			es, _ := a.ListEvents(ctx, store.EventFilter{})
			for _, e := range es {
				t.Logf("seq %d %s", e.Seq, e.Reason)
			}
		})
	}
}
