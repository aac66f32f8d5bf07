package dispatch

import (
	"context"
	"sort"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// probeOrder puts first, for a held profile whose probe is due, the cards
// whose last run did not show the held failure: a probe should test
// whether the fault is gone, and a card that failed that way already
// mostly tests the card (a card-level failure that happened to read
// alike keeps failing, and cards that would succeed would never run). The
// order is otherwise kept. Nothing is read unless a hold's probe is due.
// runsOn is the profile a card runs on in this pass (a fallback's probe is
// the fallback's).
func probeOrder(ctx context.Context, st store.Store, cards []board.Card, breakers map[string]breaker, now time.Time, runsOn func(board.Card) string) []board.Card {
	held := map[string]string{} // profile → the fingerprint its due probe tests
	var ids []string
	on := make(map[string]string, len(cards))
	for _, c := range cards {
		p := runsOn(c)
		on[c.ID] = p
		b := breakers[p]
		if _, probe, _ := policy.Allow(b.BreakerState, now); probe && b.Fingerprint != "" {
			held[p] = b.Fingerprint
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return cards
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{CardIDs: ids})
	if err != nil {
		return cards // the board order, as without a hold
	}
	last := map[string]board.Run{}
	for _, r := range runs {
		if l, ok := last[r.CardID]; !ok || r.ClaimedAt.After(l.ClaimedAt) {
			last[r.CardID] = r
		}
	}
	showed := func(c board.Card) bool {
		fp, ok := held[on[c.ID]]
		return ok && last[c.ID].Fingerprint == fp
	}
	out := append([]board.Card(nil), cards...)
	sort.SliceStable(out, func(i, j int) bool { return !showed(out[i]) && showed(out[j]) })
	return out
}
