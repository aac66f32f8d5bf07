package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// DispatchStats is one run of N sim cards through a dispatcher with K slots.
type DispatchStats struct {
	Cards int `json:"cards"`
	Slots int `json:"slots"`
	// WallMS runs from the dispatcher's start to the last card's routing.
	WallMS      float64 `json:"wall_ms"`
	CardsPerS   float64 `json:"cards_per_s"`
	PerCardMS   float64 `json:"per_card_ms"` // mean claim→routed time of one card, measured in this run
	IdealMS     float64 `json:"ideal_ms"`    // Cards/Slots × PerCardMS
	WallVsIdeal float64 `json:"wall_vs_ideal"`
}

// MeasureDispatch creates cards sim cards (zero delay, they succeed) on a
// scratch SQLite store under dir, then runs a dispatcher with slots slots
// until every card's run is routed. The ideal wall time is cards/slots ×
// the mean per-card time (claim commit to routing commit) observed in the
// same run; WallVsIdeal ≥ 1 is the dispatcher's overhead beyond running
// the agents: ticks, claims and routing writes that do not overlap.
func MeasureDispatch(ctx context.Context, dir string, cards, slots int) (DispatchStats, error) {
	st := DispatchStats{Cards: cards, Slots: slots}
	if cards <= 0 || slots <= 0 {
		return st, fmt.Errorf("bench: cards and slots must be positive (got %d and %d)", cards, slots)
	}
	scratch, cleanup, err := tempDir(dir)
	if err != nil {
		return st, err
	}
	defer cleanup()
	var mu sync.Mutex
	claimed := map[string]time.Time{}
	var busy time.Duration
	routed := 0
	all := make(chan struct{})
	obs := &observed{
		claimed: func(id string, at time.Time) { mu.Lock(); claimed[id] = at; mu.Unlock() },
		routed: func(id string, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			if c, ok := claimed[id]; ok {
				busy += at.Sub(c)
				delete(claimed, id)
				routed++
				if routed == cards {
					close(all)
				}
			}
		},
	}
	// A poll interval far beyond the run: only the dispatcher's own
	// wake-ups (a finished run, a store change) drive it.
	r, err := startRig(ctx, scratch, time.Hour, slots, obs)
	if err != nil {
		return st, err
	}
	defer r.close()
	for i := 0; i < cards; i++ {
		if _, err := createSim(ctx, r.st, fmt.Sprintf("dispatch %d", i)); err != nil {
			return st, err
		}
	}
	start := time.Now()
	if err := r.run(ctx); err != nil {
		return st, err
	}
	limit := time.Duration(cards)*time.Second + time.Minute
	select {
	case <-all:
	case <-ctx.Done():
		return st, ctx.Err()
	case <-time.After(limit):
		counts, _ := r.st.CountByState(ctx)
		return st, fmt.Errorf("bench: %d of %d cards routed within %s (board %v)", routed, cards, limit, counts)
	}
	wall := time.Since(start)
	mu.Lock()
	perCard := busy / time.Duration(cards)
	mu.Unlock()
	st.WallMS = msOf(wall)
	st.CardsPerS = float64(cards) / wall.Seconds()
	st.PerCardMS = msOf(perCard)
	st.IdealMS = float64(cards) / float64(slots) * st.PerCardMS
	if st.IdealMS > 0 {
		st.WallVsIdeal = st.WallMS / st.IdealMS
	}
	return st, nil
}

var _ store.Store = (*observed)(nil)
