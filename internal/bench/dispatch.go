package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/store"
)

// DispatchOptions says what MeasureDispatch runs.
type DispatchOptions struct {
	// Store is "" for a scratch SQLite store in a temp directory, or a
	// store DSN whose backend and place the scratch store takes (see
	// Scratch: a new SQLite file beside it, or a new PostgreSQL schema in
	// its database, dropped after); the board it names is not touched.
	Store string
	Cards int
	// Slots is each dispatcher's max_concurrent.
	Slots int
	// Nodes is how many dispatchers share the store (default 1). Each has
	// its own store handle (its own connections, its own Watch) and its
	// own node name, as separate drover serve processes would; they run in
	// this process so that one clock times every claim and routing commit.
	Nodes int
}

// DispatchStats is one run of N sim cards through Nodes dispatchers with K
// slots each.
type DispatchStats struct {
	Backend string `json:"backend"`
	Cards   int    `json:"cards"`
	Slots   int    `json:"slots"`
	Nodes   int    `json:"nodes"`
	// WallMS runs from the dispatchers' start to the last card's routing.
	WallMS      float64 `json:"wall_ms"`
	CardsPerS   float64 `json:"cards_per_s"`
	PerCardMS   float64 `json:"per_card_ms"` // mean claim→routed time of one card, measured in this run
	IdealMS     float64 `json:"ideal_ms"`    // Cards/(Slots×Nodes) × PerCardMS
	WallVsIdeal float64 `json:"wall_vs_ideal"`
}

// MeasureDispatch creates o.Cards sim cards (zero delay, they succeed) on
// a scratch store, then runs o.Nodes dispatchers with o.Slots slots each
// until every card's run is routed. Scratch directories go under dir ("" =
// the system's temp dir). The ideal wall time is cards/(slots×nodes) × the
// mean per-card time (claim commit to routing commit) observed in the same
// run; WallVsIdeal ≥ 1 is the dispatchers' overhead beyond running the
// agents: ticks, claims and routing writes that do not overlap.
func MeasureDispatch(ctx context.Context, dir string, o DispatchOptions) (DispatchStats, error) {
	if o.Nodes == 0 {
		o.Nodes = 1
	}
	cards, slots := o.Cards, o.Slots
	st := DispatchStats{Backend: "sqlite", Cards: cards, Slots: slots, Nodes: o.Nodes}
	if cards <= 0 || slots <= 0 || o.Nodes < 0 {
		return st, fmt.Errorf("bench: cards, slots and nodes must be positive (got %d, %d and %d)", cards, slots, o.Nodes)
	}
	scratch, dsn, cleanup, err := scratchStore(ctx, dir, o.Store)
	if err != nil {
		return st, err
	}
	defer cleanup()
	var mu sync.Mutex
	claimed := map[string]time.Time{}
	var busy time.Duration
	routed := 0
	all := make(chan struct{})
	claim := func(id string, at time.Time) { mu.Lock(); claimed[id] = at; mu.Unlock() }
	route := func(id string, at time.Time) {
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
	}
	var rigs []*rig
	defer func() {
		for _, r := range rigs {
			r.close()
		}
	}()
	for i := range o.Nodes {
		nodeDir := filepath.Join(scratch, fmt.Sprint("node-", i+1))
		// A poll interval far beyond the run: only the dispatchers' own
		// wake-ups (a finished run, a store change) drive them.
		r, err := startRig(ctx, dsn, nodeDir, fmt.Sprint("bench-", i+1), time.Hour, slots, &observed{claimed: claim, routed: route})
		if err != nil {
			return st, err
		}
		rigs = append(rigs, r)
	}
	st.Backend = rigs[0].st.Backend()
	r := rigs[0]
	for i := 0; i < cards; i++ {
		if _, err := createSim(ctx, r.st, fmt.Sprintf("dispatch %d", i)); err != nil {
			return st, err
		}
	}
	start := time.Now()
	limit := time.Duration(cards)*time.Second + time.Minute
	for _, r := range rigs {
		if err := r.run(ctx, limit); err != nil {
			return st, err
		}
	}
	select {
	case <-all:
	case <-ctx.Done():
		return st, ctx.Err()
	case <-time.After(limit):
		counts, _ := r.st.CountByState(ctx)
		mu.Lock()
		n := routed
		mu.Unlock()
		return st, fmt.Errorf("bench: %d of %d cards routed within %s (board %v)", n, cards, limit, counts)
	}
	wall := time.Since(start)
	mu.Lock()
	perCard := busy / time.Duration(cards)
	mu.Unlock()
	st.WallMS = msOf(wall)
	st.CardsPerS = float64(cards) / wall.Seconds()
	st.PerCardMS = msOf(perCard)
	st.IdealMS = float64(cards) / float64(slots*o.Nodes) * st.PerCardMS
	if st.IdealMS > 0 {
		st.WallVsIdeal = st.WallMS / st.IdealMS
	}
	return st, nil
}

var _ store.Store = (*observed)(nil)
