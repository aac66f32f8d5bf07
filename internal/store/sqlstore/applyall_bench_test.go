package sqlstore_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// routeOf is the routing of a claim change's run as a dispatcher writes
// it: the card released to done under the claim's guard, the run succeeded
// (only while open), a finished event.
func routeOf(claim store.Change) store.Change {
	c := *claim.Card
	held := *c.Claim
	c.Version++
	c.Claim, c.State = nil, "done"
	r := *claim.NewRun
	r.Outcome = board.OutcomeSucceeded
	return store.Change{Card: &c, ClaimGuard: &held, Run: &r, RunMustBeOpen: true,
		Events: []board.Event{{CardID: c.ID, RunID: r.ID, Type: board.EvFinished, Actor: "n", Reason: "succeeded"}}}
}

// BenchmarkApplyAll writes a dispatcher's batches: 200 claims in one
// ApplyAll, then their 200 routings in another. cards/s counts a card once
// claimed and routed.
func BenchmarkApplyAll(b *testing.B) {
	const batch = 200
	for _, be := range testkit.Backends {
		b.Run(string(be), func(b *testing.B) {
			s := testkit.Store(b, be)
			ctx := context.Background()
			if err := s.BulkInsertCardsForTest(ctx, "BEN", batch*b.N, func(i int) board.Card {
				return board.Card{Title: fmt.Sprint("card ", i), State: "ready"}
			}); err != nil {
				b.Fatal(err)
			}
			cards, err := s.ListCards(ctx, store.CardFilter{})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				part := cards[i*batch : (i+1)*batch]
				claims := make([]store.Change, batch)
				for k := range part {
					c := part[k]
					c.Claim = &board.Claim{Owner: "n", Epoch: c.Version + 1, LeaseUntil: time.Now().Add(time.Minute)}
					c.State = "running"
					claims[k] = store.Change{Card: &c, NewRun: &board.Run{CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: c.Claim.Epoch},
						Events: []board.Event{{CardID: c.ID, Type: board.EvClaimed, Actor: "n", Reason: "attempt 1"}}}
				}
				applyAll(b, s, claims)
				routes := make([]store.Change, batch)
				for k, ch := range claims {
					routes[k] = routeOf(ch)
				}
				applyAll(b, s, routes)
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "cards/s")
			// This process's CPU per card: on a shared machine it moves
			// less than the wall clock does.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(batch*b.N), "cpu-µs/card")
		})
	}
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func applyAll(b *testing.B, s store.Store, chs []store.Change) {
	refused, err := s.ApplyAll(context.Background(), chs)
	if err != nil {
		b.Fatal(err)
	}
	for i, e := range refused {
		if e != nil {
			b.Fatalf("change %d refused: %v", i, e)
		}
	}
}
