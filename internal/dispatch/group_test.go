package dispatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestGroupRoutingKeepsEachCardsGuards routes six finished runs as one
// group: one card's claim passed to another node meanwhile, and an
// operator edited another card. The stale claim is recorded as lease_lost
// and its card is left to its new owner; the edited card is decided again
// on its own and still routed; the other four are routed. Every run has
// exactly one outcome, every card one finished (or lease_lost) event.
func TestGroupRoutingKeepsEachCardsGuards(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		ctx := context.Background()
		st := testkit.Store(t, backend)
		cfg := testkit.NewWorkflow().Set("dispatch", "{node: n1, max_concurrent: 10}").Config(t, t.TempDir())
		d, err := New(Options{Store: st, Config: cfg, LogDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		d.startHook = func(board.Card, board.Run) bool { return false }
		var reqs []claimReq
		for i := 0; i < 6; i++ {
			c, err := st.CreateCard(ctx, "DRV", board.Card{Title: fmt.Sprint("card ", i), State: "ready", Spec: []byte(`{"sim":["succeeded"]}`)}, "test")
			if err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs, claimReq{card: c, profile: "sim"})
		}
		refused, err := d.claimAll(ctx, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range refused {
			if e != nil {
				t.Fatalf("claim %d refused: %v", i, e)
			}
		}
		var group []*routeReq
		for _, r := range reqs {
			c, _ := st.GetCard(ctx, r.card.ID)
			open, _ := st.ListRuns(ctx, store.RunFilter{CardID: c.ID, Open: store.Bool(true)})
			if c.Claim == nil || len(open) != 1 || open[0].Attempt != 1 {
				t.Fatalf("%s after the batched claim: claim %+v, open runs %+v", c.Identifier, c.Claim, open)
			}
			group = append(group, &routeReq{ctx: ctx, cardID: c.ID, claim: *c.Claim, run: open[0],
				cls: policy.Classification{Kind: policy.KindSucceeded, Source: "test"}, res: &agent.Result{Signals: policy.Signals{ExitCode: 0}}})
		}
		// Card 1's claim passes to n2 (its lease ended); card 3 is edited.
		taken, _ := st.GetCard(ctx, reqs[1].card.ID)
		was := *taken.Claim
		taken.Claim = &board.Claim{Owner: "n2", Epoch: taken.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
		if err := st.Apply(ctx, store.Change{Card: &taken, ClaimGuard: &was}); err != nil {
			t.Fatal(err)
		}
		edited, _ := st.GetCard(ctx, reqs[3].card.ID)
		edited.Title = "edited while running"
		if err := st.Apply(ctx, store.Change{Card: &edited}); err != nil {
			t.Fatal(err)
		}
		// A breaker read and the group's reads happen first; the edit lands
		// between them and the write, so that routing's version guard fails.
		var once sync.Once
		orig := d.o.Store
		d.o.Store = &beforeApplyAll{Store: orig, hook: func() {
			once.Do(func() {
				c, _ := orig.GetCard(ctx, reqs[3].card.ID)
				c.Title = "edited again"
				if err := orig.Apply(ctx, store.Change{Card: &c}); err != nil {
					t.Error(err)
				}
			})
		}}
		results := d.routeGroupOnce(group)
		for i, err := range results {
			if err != nil {
				t.Errorf("routing %d: %v", i, err)
			}
		}
		for i, r := range reqs {
			c, _ := st.GetCard(ctx, r.card.ID)
			run, _ := st.GetRun(ctx, group[i].run.ID)
			evs, _ := st.ListEvents(ctx, store.EventFilter{CardID: c.ID})
			ends := 0
			for _, e := range evs {
				if e.Type == board.EvFinished || e.Type == board.EvLeaseLost {
					ends++
				}
			}
			switch i {
			case 1:
				if run.Outcome != board.OutcomeLeaseLost || c.Claim == nil || c.Claim.Owner != "n2" || c.State != "in_progress" {
					t.Errorf("stale claim: run %s, card %s claim %+v; want lease_lost and the card left to n2", run.Outcome, c.State, c.Claim)
				}
			case 3:
				if run.Outcome != board.OutcomeSucceeded || c.State != "review" || c.Title != "edited again" {
					t.Errorf("edited card: run %s, card %s %q; want routed to review keeping the edit", run.Outcome, c.State, c.Title)
				}
			default:
				if run.Outcome != board.OutcomeSucceeded || c.State != "review" || c.Claim != nil {
					t.Errorf("%s: run %s, card %s claim %+v; want succeeded, review, unclaimed", c.Identifier, run.Outcome, c.State, c.Claim)
				}
			}
			if ends != 1 {
				t.Errorf("%s: %d finishing events, want exactly 1", c.Identifier, ends)
			}
		}
	})
}

// beforeApplyAll runs hook before each ApplyAll reaches the store.
type beforeApplyAll struct {
	store.Store
	hook func()
}

func (b *beforeApplyAll) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	b.hook()
	return b.Store.ApplyAll(ctx, chs)
}

// TestRefusedClaimBatchIsNoStoreError: the database refuses a whole batch of
// claims as a conflict (PostgreSQL's deadlock against another node's batch).
// Nothing was claimed, the tick reports no store error, and the next tick
// claims the cards.
func TestRefusedClaimBatchIsNoStoreError(t *testing.T) {
	w := newWorld(t, 3)
	for i := 0; i < 3; i++ {
		w.add(fmt.Sprint("card ", i), "", `{"sim":["succeeded"],"sim_delay":"0s"}`)
	}
	refuse := true
	d, err := New(Options{Store: &refusingBatch{Store: w.st, refuse: &refuse}, Config: w.cfg, Node: "n1", LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	d.startHook = func(board.Card, board.Run) bool { return false }
	d.Tick(context.Background())
	if st := d.Status(); st.StoreError != "" {
		t.Fatalf("a refused batch was reported as a store error: %s", st.StoreError)
	}
	if claimed, _ := w.st.ListCards(context.Background(), store.CardFilter{Claimed: store.Bool(true)}); len(claimed) != 0 {
		t.Fatalf("%d cards claimed by a refused batch", len(claimed))
	}
	refuse = false
	d.Tick(context.Background())
	if claimed, _ := w.st.ListCards(context.Background(), store.CardFilter{Claimed: store.Bool(true)}); len(claimed) != 3 {
		t.Fatalf("%d cards claimed on the next tick, want 3", len(claimed))
	}
}

type refusingBatch struct {
	store.Store
	refuse *bool
}

func (r *refusingBatch) ApplyAll(ctx context.Context, chs []store.Change) ([]error, error) {
	if *r.refuse {
		return nil, fmt.Errorf("%w (the database refused the transaction: deadlock detected)", store.ErrConflict)
	}
	return r.Store.ApplyAll(ctx, chs)
}
