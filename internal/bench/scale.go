package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/server"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/store"
)

// parkedSpec scripts a sim run that takes an hour: a card claimed while
// measuring keeps its slot and writes nothing more.
const parkedSpec = `{"sim": ["succeeded"], "sim_delay": "1h", "sim_cost_usd": 0}`

// BoardStats is what operators and a dispatcher see on a large board.
type BoardStats struct {
	Backend string    `json:"backend"`
	Cards   int       `json:"cards"`
	SeedS   float64   `json:"seed_s"` // creating the cards
	Samples int       `json:"samples"`
	Ops     []BoardOp `json:"ops"`
}

// BoardOp is one operation's median and slowest time over the samples.
type BoardOp struct {
	Name   string  `json:"name"`
	What   string  `json:"what"`
	P50MS  float64 `json:"p50_ms"`
	MaxMS  float64 `json:"max_ms"`
	Detail string  `json:"detail,omitempty"`
}

// boardSamples is how many times each board operation is timed.
const boardSamples = 5

// MeasureBoard creates cards cards on a scratch store (storeDSN as in
// DispatchOptions.Store) spread over the columns (a fifth ready), then times
// `drover status` (status.Snapshot), the dashboard's board page (GET /
// through the server's handler, no network) and a new dispatcher's first
// tick (registering its node, recovery, and claiming its 4 slots' worth of
// ready cards out of the fifth of the board that is ready).
func MeasureBoard(ctx context.Context, dir, storeDSN string, cards int) (BoardStats, error) {
	bs := BoardStats{Cards: cards, Samples: boardSamples}
	if cards <= 0 {
		return bs, fmt.Errorf("bench: cards must be positive (got %d)", cards)
	}
	scratch, dsn, cleanup, err := scratchStore(ctx, dir, storeDSN)
	if err != nil {
		return bs, err
	}
	defer cleanup()
	// The store handle of the operations; each tick's dispatcher opens its own.
	r, err := startRig(ctx, dsn, scratch, "bench-board", time.Hour, 4, &observed{})
	if err != nil {
		return bs, err
	}
	defer r.close()
	st := r.st
	bs.Backend = st.Backend()
	start := time.Now()
	if err := createMany(ctx, st, cards, func(i int) board.Card {
		return board.Card{Title: fmt.Sprint("board card ", i), State: stateOf(i), Priority: i % 5, Spec: []byte(parkedSpec)}
	}); err != nil {
		return bs, err
	}
	bs.SeedS = time.Since(start).Seconds()

	cfg, err := config.Parse([]byte("---\n---\n"), "")
	if err != nil {
		return bs, err
	}
	srv := server.New(server.Options{Store: st, Config: func() *config.Config { return cfg }})
	var pageBytes int
	ops := []struct {
		name, what string
		fn         func() error
	}{
		{"status", "drover status: status.Snapshot (also GET /api/v1/state)", func() error {
			_, err := status.Snapshot(ctx, st, cfg, time.Now())
			return err
		}},
		{"dashboard", "the dashboard's board page: GET / through the server's handler", func() error {
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/", nil))
			if rec.Code != http.StatusOK {
				return fmt.Errorf("GET / answered %d: %.200s", rec.Code, rec.Body.String())
			}
			pageBytes = rec.Body.Len()
			return nil
		}},
		{"tick", "a new dispatcher's first tick: register, recover, claim 4 ready cards", func() error {
			return firstTick(ctx, dsn, scratch)
		}},
	}
	for _, op := range ops {
		var ds []time.Duration
		for range boardSamples {
			t := time.Now()
			if err := op.fn(); err != nil {
				return bs, fmt.Errorf("%s: %w", op.name, err)
			}
			ds = append(ds, time.Since(t))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		o := BoardOp{Name: op.name, What: op.what, P50MS: msOf(ds[len(ds)/2]), MaxMS: msOf(ds[len(ds)-1])}
		if op.name == "dashboard" {
			o.Detail = fmt.Sprintf("%d bytes of HTML", pageBytes)
		}
		bs.Ops = append(bs.Ops, o)
	}
	return bs, nil
}

// firstTick starts a dispatcher on dsn, times its first tick and stops it
// (its parked runs are interrupted and their cards go back to ready).
func firstTick(ctx context.Context, dsn, dir string) error {
	r, err := startRig(ctx, dsn, dir, "bench-tick", time.Hour, 4, &observed{})
	if err != nil {
		return err
	}
	if err := r.run(ctx, time.Hour); err != nil {
		r.close()
		return err
	}
	return r.close()
}

// createMany creates n cards with a few writers at once (PostgreSQL
// commits them in parallel; SQLite queues them).
func createMany(ctx context.Context, st store.Store, n int, card func(i int) board.Card) error {
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				if _, err := st.CreateCard(ctx, "BEN", card(i), "bench"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// RecoverStats is a restarted node recovering the runs its previous life
// left open.
type RecoverStats struct {
	Backend string  `json:"backend"`
	Runs    int     `json:"runs"`
	SeedS   float64 `json:"seed_s"`
	// WallMS runs from the dispatcher's start to the last recovered run's
	// routing commit.
	WallMS    float64 `json:"wall_ms"`
	RunsPerS  float64 `json:"runs_per_s"`
	FirstMS   float64 `json:"first_ms"` // start to the first run routed
	PerRunMS  float64 `json:"per_run_ms"`
	Recovered int     `json:"recovered"`
}

// MeasureRecover leaves runs open runs on a scratch store, claimed by node
// "bench" with leases that expired a minute ago (a process that was killed
// and restarted later), then starts a dispatcher named "bench" and times
// until every run is routed as interrupted. A node's own claims from a
// previous life are recovered at once; other nodes' wait a lease period
// first (the dispatcher's guard against judging leases across a store
// outage), which this figure leaves out. The dispatcher has one slot and
// the cards' next attempt takes an hour, so re-running them does not
// compete with the recovery.
func MeasureRecover(ctx context.Context, dir, storeDSN string, runs int) (RecoverStats, error) {
	rs := RecoverStats{Runs: runs}
	if runs <= 0 {
		return rs, fmt.Errorf("bench: runs must be positive (got %d)", runs)
	}
	scratch, dsn, cleanup, err := scratchStore(ctx, dir, storeDSN)
	if err != nil {
		return rs, err
	}
	defer cleanup()
	var mu sync.Mutex
	open := map[string]bool{}
	var first time.Time
	all := make(chan struct{})
	obs := &observed{routed: func(id string, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if !open[id] {
			return
		}
		delete(open, id)
		rs.Recovered++
		if first.IsZero() {
			first = at
		}
		if len(open) == 0 {
			close(all)
		}
	}}
	r, err := startRig(ctx, dsn, scratch, "bench", time.Hour, 1, obs)
	if err != nil {
		return rs, err
	}
	defer r.close()
	rs.Backend = r.st.Backend()
	start := time.Now()
	expired := time.Now().Add(-time.Minute)
	for i := range runs {
		c, err := r.st.CreateCard(ctx, "BEN", board.Card{Title: fmt.Sprint("left open ", i), State: "ready", Spec: []byte(parkedSpec)}, "bench")
		if err != nil {
			return rs, err
		}
		next := c
		next.State = "in_progress"
		next.Claim = &board.Claim{Owner: "bench", Epoch: c.Version + 1, LeaseUntil: expired}
		run := &board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 1, RetryEpoch: c.RetryEpoch, ClaimEpoch: next.Claim.Epoch, Node: "bench", ClaimedAt: expired.Add(-time.Minute)}
		if err := r.st.Apply(ctx, store.Change{Card: &next, NewRun: run,
			Events: []board.Event{{At: run.ClaimedAt, CardID: c.ID, RunID: run.ID, Type: board.EvClaimed, Actor: "bench"}}}); err != nil {
			return rs, err
		}
		open[c.ID] = true
	}
	rs.SeedS = time.Since(start).Seconds()
	start = time.Now()
	limit := time.Duration(runs)*100*time.Millisecond + time.Minute
	if err := r.run(ctx, limit); err != nil {
		return rs, err
	}
	select {
	case <-all:
	case <-ctx.Done():
		return rs, ctx.Err()
	case <-time.After(limit):
		mu.Lock()
		n := rs.Recovered
		mu.Unlock()
		return rs, fmt.Errorf("bench: %d of %d open runs recovered within %s", n, runs, limit)
	}
	wall := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	rs.WallMS = msOf(wall)
	rs.RunsPerS = float64(runs) / wall.Seconds()
	rs.FirstMS = msOf(first.Sub(start))
	rs.PerRunMS = rs.WallMS / float64(runs)
	return rs, nil
}
