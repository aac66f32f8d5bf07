package policybench

import (
	"context"
	"slices"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// play ticks the dispatcher as drover serve would at each time something
// is due (drover's default poll_interval, 5s, finds nothing in between),
// lets the operator act when a state asks
// for one after the fault cleared, and records each card's first truthful
// moment, until the horizon or until nothing is left to happen.
func (w *world) play(ctx context.Context) error {
	for {
		now := w.clk.Now()
		el := now.Sub(start)
		if el > w.s.Horizon {
			return nil
		}
		if err := w.operator(ctx, el); err != nil {
			return err
		}
		// Tick until a pass starts nothing: the runs a pass starts end (and
		// are routed) within it, so the next pass sees their schedule.
		next := w.d.Tick(ctx)
		for i, seen := 0, w.sessions(); i < 100; i++ {
			next = w.d.Tick(ctx)
			if n := w.sessions(); n == seen && (next.IsZero() || next.After(w.clk.Now())) {
				break
			} else {
				seen = n
			}
		}
		if err := w.observe(ctx, el); err != nil {
			return err
		}
		if w.settled() {
			return nil
		}
		// Between now and the dispatcher's next due time (none: the next
		// event outside it, or the horizon) its passes find nothing to do
		// and change nothing a card shows: skip them.
		to := start.Add(w.s.Horizon + time.Second)
		if next.After(now) {
			to = next
		}
		for _, t := range w.events() {
			if t > el && start.Add(t).Before(to) {
				to = start.Add(t)
			}
		}
		w.clk.Set(to)
	}
}

// events are the offsets at which something outside the dispatcher happens.
func (w *world) events() []time.Duration {
	ev := []time.Duration{}
	if w.s.ClearAt >= 0 {
		ev = append(ev, w.s.ClearAt)
	}
	for _, at := range w.asked {
		ev = append(ev, w.s.humanAt(at))
	}
	return ev
}

// settled: every card is done, or (the fault never clears) stopped for a human.
func (w *world) settled() bool {
	for _, c := range w.cards {
		role := w.cfg.Board.RoleOf(c.State)
		if role == board.RoleDone || role == board.RoleCompleted || (w.s.ClearAt < 0 && role == board.RoleBlocked) {
			continue
		}
		return false
	}
	return true
}

// observe reads the board and the profile's state and notes each card's
// class, as drover status and the dashboard show them.
func (w *world) observe(ctx context.Context, el time.Duration) error {
	cards, err := w.db.ListCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	w.cards = cards
	states, err := w.db.ListAgentStates(ctx)
	if err != nil {
		return err
	}
	var prof store.AgentState
	for _, a := range states {
		if a.Name == profile {
			prof = a
		}
	}
	if prof.State == "paused" && prof.Until == nil {
		w.ask("", el) // until an operator resumes the profile
	}
	for _, c := range cards {
		cl := w.class(c, prof)
		if _, ok := w.first[c.ID]; !ok && w.s.truthful(cl) {
			w.first[c.ID] = el
		}
		if cl == NeedsHuman {
			w.ask(c.ID, el)
		}
	}
	return nil
}

func (w *world) ask(key string, el time.Duration) {
	if _, ok := w.asked[key]; !ok {
		w.asked[key] = el
	}
}

// class is what a card shows: done; blocked or parked with a reason the
// scenario's fault explains (needs a human); waiting on its profile,
// held, paused or with its breaker open for the fault's kind, or deferred
// by a run of that kind (waiting); else retrying or queued.
func (w *world) class(c board.Card, prof store.AgentState) Class {
	right := func(k string) bool { return slices.Contains(w.s.Reasons, policy.Kind(k)) }
	switch w.cfg.Board.RoleOf(c.State) {
	case board.RoleDone, board.RoleCompleted:
		return Done
	case board.RoleBlocked:
		if c.BlockReason != nil && right(c.BlockReason.Kind) {
			return NeedsHuman
		}
		return Retrying // blocked, but not for what is wrong: a wrong state
	case board.RoleParked:
		return NeedsHuman
	}
	if prof.State != "" && prof.State != "closed" && right(prof.Kind) {
		return Waiting
	}
	if w.life[c.ID] == 0 {
		return Queued
	}
	return Retrying
}

// operator does what drover's states ask of a human once the fault has
// cleared: drover agent resume for a profile paused until an operator,
// drover card reopen for a card blocked by the fault. A card whose own
// input is at fault is left blocked: its fix is counted in result.
func (w *world) operator(ctx context.Context, el time.Duration) error {
	if w.s.ClearAt < 0 || el < w.s.ClearAt {
		return nil
	}
	for key, at := range w.asked {
		if el < w.s.humanAt(at) {
			continue
		}
		delete(w.asked, key)
		w.humans++
		if key == "" {
			if _, err := w.ops.ResumeAgent(ctx, profile); err != nil {
				return err
			}
			for _, c := range w.cards {
				w.touched[c.ID] = true
			}
			continue
		}
		w.touched[key] = true
		if _, err := w.ops.Reopen(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) result(ctx context.Context, price float64) (Result, error) {
	runs, err := w.db.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		return Result{}, err
	}
	t := tally{r: Result{Scenario: w.s.Name, Policy: Drover, Runs: len(runs), sessions: len(runs)}}
	for _, c := range w.cards {
		first, ok := w.first[c.ID]
		if !ok {
			first = -1
		}
		role := w.cfg.Board.RoleOf(c.State)
		done := role == board.RoleDone || role == board.RoleCompleted
		humans := 0
		if !done && w.s.ClearAt < 0 {
			humans = 1 // the fix
		}
		t.card(first, done && !w.touched[c.ID], humans)
	}
	t.r.HumanActions += w.humans
	return t.result(price), nil
}

func (w *world) sessions() int {
	n := 0
	for _, k := range w.life {
		n += k
	}
	return n
}
