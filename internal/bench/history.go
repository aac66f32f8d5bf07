package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// HistoryStats compares what operators and the dispatcher do on a store
// with a long history (Events events, Runs finished runs) with the same
// board on a fresh store, side by side in one run.
type HistoryStats struct {
	Backend string      `json:"backend"`
	Cards   int         `json:"cards"`
	Events  int         `json:"events"`
	Runs    int         `json:"runs"`
	SeedS   float64     `json:"seed_s"` // building the long history
	Ops     []HistoryOp `json:"ops"`
}

// HistoryOp is one operation's median time on each store and their ratio
// (long history / fresh; about 1 means the history costs nothing).
type HistoryOp struct {
	Name    string  `json:"name"`
	What    string  `json:"what"`
	FreshMS float64 `json:"fresh_ms"`
	LongMS  float64 `json:"long_ms"`
	Ratio   float64 `json:"ratio"`
}

// historySamples is how many times each operation is measured per store.
const historySamples = 30

// freshEvents is how many events each card of the fresh store has.
const freshEvents = 250

// MeasureHistory seeds fresh and long with the same board of cards (a
// fifth ready, the rest done) and a day of events (freshEvents a card),
// gives long instead runsPerCard finished runs per card and events events
// over the past year, then times status, the dashboard's reads, card show
// and a claim on each.
func MeasureHistory(ctx context.Context, fresh, long *sqlstore.DB, cards, runsPerCard, events int) (HistoryStats, error) {
	hs := HistoryStats{Backend: long.Backend(), Cards: cards, Events: events, Runs: cards * runsPerCard}
	cfg, err := config.Parse([]byte("---\n---\n"), "")
	if err != nil {
		return hs, err
	}
	now := time.Now()
	start := time.Now()
	for i, st := range []*sqlstore.DB{fresh, long} {
		ids, err := seedBoard(ctx, st, cards, runsPerCard, i == 1, now)
		if err != nil {
			return hs, err
		}
		ids = ids[:min(len(ids), sqlstore.MaxGeneratedCards)]
		// The fresh store has a day of events, enough to fill every page
		// read below, so the comparison is of the same reads.
		n, from := freshEvents*len(ids), now.Add(-24*time.Hour)
		if st == long {
			n, from = events, now.Add(-365*24*time.Hour)
		}
		if err := st.GenerateEvents(ctx, n, from, now, ids); err != nil {
			return hs, err
		}
	}
	hs.SeedS = time.Since(start).Seconds()

	ops := []struct {
		name, what string
		fn         func(context.Context, store.Store) error
	}{
		{"status", "status.Snapshot: drover status and GET /api/v1/state", func(ctx context.Context, st store.Store) error {
			_, err := status.Snapshot(ctx, st, cfg, time.Now())
			return err
		}},
		{"dashboard", "the board page: the snapshot, a page of each column, the latest 50 events", func(ctx context.Context, st store.Store) error {
			if _, err := status.Snapshot(ctx, st, cfg, time.Now()); err != nil {
				return err
			}
			for _, c := range cfg.Board.Columns {
				if _, err := st.ListCards(ctx, store.CardFilter{States: []string{c.Name}, Limit: 100}); err != nil {
					return err
				}
			}
			_, err := st.ListEvents(ctx, store.EventFilter{Newest: true, Limit: 50})
			return err
		}},
		{"card", "card show: a card's runs and its latest 200 events", func(ctx context.Context, st store.Store) error {
			cs, err := st.ListCards(ctx, store.CardFilter{States: []string{"done"}, Limit: 1})
			if err != nil || len(cs) == 0 {
				return err
			}
			if _, err := st.ListRuns(ctx, store.RunFilter{CardID: cs[0].ID}); err != nil {
				return err
			}
			_, err = st.ListEvents(ctx, store.EventFilter{CardID: cs[0].ID, Newest: true, Limit: 200})
			return err
		}},
		{"claim", "a dispatcher's claim: due unclaimed cards, the card's runs, the claiming transaction", claimOne},
	}
	for _, op := range ops {
		f, l, err := medians(ctx, fresh, long, op.fn)
		if err != nil {
			return hs, fmt.Errorf("%s: %w", op.name, err)
		}
		r := 0.0
		if f > 0 {
			r = l / f
		}
		hs.Ops = append(hs.Ops, HistoryOp{Name: op.name, What: op.what, FreshMS: f, LongMS: l, Ratio: r})
	}
	return hs, nil
}

// seedBoard creates the cards and, with history, their finished runs (spread
// over the year before today, as a long-lived board's are); it returns the
// card ids.
func seedBoard(ctx context.Context, st *sqlstore.DB, cards, runsPerCard int, history bool, now time.Time) ([]string, error) {
	var ids []string
	for i := 0; i < cards; i++ {
		state := "done"
		if i%5 == 0 {
			state = "ready"
		}
		c, err := st.CreateCard(ctx, "DRV", board.Card{Title: fmt.Sprint("card ", i), State: state, Spec: json.RawMessage(`{}`)}, "bench")
		if err != nil {
			return nil, err
		}
		ids = append(ids, c.ID)
		if !history {
			continue
		}
		for a := 1; a <= runsPerCard; a++ {
			// Spread over the past year, before today, oldest attempt first.
			age := time.Duration(float64(364*24*time.Hour) * float64((runsPerCard-a)*cards+i) / float64(cards*runsPerCard))
			fin := now.Add(-24*time.Hour - age)
			r := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: a, RetryEpoch: 1, Outcome: board.OutcomeFailed,
				ClaimedAt: fin.Add(-time.Minute), FinishedAt: &fin}
			if err := st.Apply(ctx, store.Change{NewRun: &r}); err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}

// claimOne claims the first due, unclaimed ready card as the dispatcher
// does (list, runs of the card, one transaction).
func claimOne(ctx context.Context, st store.Store) error {
	now := time.Now().UTC()
	cs, err := st.ListCards(ctx, store.CardFilter{States: []string{"ready"}, Claimed: store.Bool(false), DueBy: &now, Limit: 50})
	if err != nil {
		return err
	}
	if len(cs) == 0 {
		return fmt.Errorf("no ready card left to claim")
	}
	c := cs[0]
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: c.ID})
	if err != nil {
		return err
	}
	next := c
	next.Claim = &board.Claim{Owner: "bench", Epoch: c.Version + 1, LeaseUntil: now.Add(time.Minute)}
	next.State = "in_progress"
	run := &board.Run{ID: board.NewID(), CardID: c.ID, Attempt: len(runs) + 1, RetryEpoch: 2, ClaimEpoch: next.Claim.Epoch, Node: "bench", ClaimedAt: now}
	return st.Apply(ctx, store.Change{Card: &next, NewRun: run,
		Events: []board.Event{{At: now, CardID: c.ID, RunID: run.ID, Type: board.EvClaimed, Actor: "bench"}}})
}

// medians runs fn historySamples times on each store (after a warm-up),
// alternating between them so a change in the machine's load weighs on
// both alike, and returns each store's median in milliseconds.
func medians(ctx context.Context, a, b store.Store, fn func(context.Context, store.Store) error) (float64, float64, error) {
	var ds [2][]float64
	for i := -1; i < historySamples; i++ {
		for j, st := range []store.Store{a, b} {
			t := time.Now()
			if err := fn(ctx, st); err != nil {
				return 0, 0, fmt.Errorf("on the %s store: %w", [2]string{"fresh", "long"}[j], err)
			}
			if i >= 0 { // the first round warms up
				ds[j] = append(ds[j], float64(time.Since(t).Microseconds())/1000)
			}
		}
	}
	for j := range ds {
		sort.Float64s(ds[j])
	}
	return ds[0][len(ds[0])/2], ds[1][len(ds[1])/2], nil
}
