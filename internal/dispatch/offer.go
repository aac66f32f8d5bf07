package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// dispatch claims and starts eligible cards while slots are free.
func (d *Dispatcher) dispatch(ctx context.Context, now time.Time) (time.Time, error) {
	cfg := d.cfg.Load()
	var eligible []string
	for _, c := range cfg.Board.Columns {
		if c.Role == board.RoleEligible {
			eligible = append(eligible, c.Name)
		}
	}
	spendWhy, budget, err := d.spendPaused(ctx, cfg, now)
	if err != nil {
		return time.Time{}, err
	}
	breakers, err := readBreakers(ctx, d.o.Store)
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, st := range breakers {
		if st.Until != nil && st.Until.After(now) {
			soonest(*st.Until)
		}
	}
	// The soonest scheduled retry sets the wake-up timer.
	later, err := d.o.Store.ListCards(ctx, store.CardFilter{States: eligible, Claimed: store.Bool(false), ScheduledAfter: &now, Order: store.OrderNextAttempt, Limit: 1})
	if err != nil {
		return time.Time{}, err
	}
	if len(later) == 1 {
		soonest(*later[0].NextAttemptAt)
	}
	// Due cards in board order, a page at a time, only while slots are free:
	// a tick's work follows the free slots, not the size of the backlog.
	probing := map[string]bool{}
	for skipped := 0; d.slotsFree(cfg) > 0; {
		// A page sized by the free slots (twice over, for cards the checks
		// turn away), up to 200: a node with 3 free slots of 100 reads a
		// handful of cards, not 200, on each of its many wake-ups.
		page := min(max(2*d.slotsFree(cfg), 16), 200)
		cards, err := d.o.Store.ListCards(ctx, store.CardFilter{States: eligible, Claimed: store.Bool(false), DueBy: &now, Limit: page, Offset: skipped})
		if err != nil {
			return next, err
		}
		taken, err := d.offer(ctx, cfg, cards, now, &spendWhy, budget, breakers, probing)
		if err != nil {
			return next, err
		}
		skipped += len(cards) - taken
		if len(cards) < page {
			break
		}
	}
	return next, nil
}

// offer checks each card of a page and claims the eligible ones while slots
// are free, all of the page's claims in one store transaction (claimAll).
// Each run it is about to start is reserved on the day's budget (nil = no
// day cap), which may pause dispatch for the cards after it. It returns how
// many cards left the due set (claimed, blocked, or taken by another node).
func (d *Dispatcher) offer(ctx context.Context, cfg *config.Config, cards []board.Card, now time.Time, spendWhy *string, budget *policy.DayBudget, breakers map[string]breaker, probing map[string]bool) (int, error) {
	taken := 0
	var batch []claimReq
	inState := map[string]int{} // the batch's claims by the state they leave
	for _, c := range probeOrder(ctx, d.o.Store, cfg, cards, breakers, now) {
		profile := profileOf(cfg, c)
		bok, probe, bwhy := policy.Allow(breakers[profile].BreakerState, now)
		if probe && probing[profile] {
			bok, bwhy = false, "a probe run for "+profile+" is already on its way"
		}
		f := Facts{Board: cfg.Board, Card: c, Now: now, Profile: profile, BreakerOK: bok, BreakerWhy: bwhy,
			SpendWhy: *spendWhy, SlotsFree: d.slotsFree(cfg) - len(batch), StateFree: d.stateFree(cfg, c.State)}
		if f.StateFree >= 0 {
			f.StateFree -= inState[c.State]
		}
		_, f.ProfileOK = cfg.Agents.Profile(profile)
		if f.ProfileOK {
			f.Unusable = d.usable.check(cfg, profile, d.self)
		}
		if len(c.BlockedBy) > 0 {
			f.Blockers = blockersOf(ctx, d.o.Store, c)
		}
		if !f.ProfileOK {
			d.routes.blockInvalid(ctx, c, "agent", fmt.Sprintf("the card names agent profile %q, which is not in agents.profiles", profile),
				fmt.Sprintf("drover card edit %s --agent NAME (profiles: %v), then drover card resume %s", c.Identifier, profileNames(cfg), c.Identifier))
			taken++
			continue
		}
		if !AllOK(Eligible(f)) {
			if f.SlotsFree <= 0 {
				break
			}
			continue
		}
		if d.validate(ctx, c, profile) || d.overCardCap(ctx, cfg, c) {
			taken++ // blocked once, before any session
			continue
		}
		batch = append(batch, claimReq{card: c, profile: profile, probe: probe})
		inState[c.State]++
		if probe {
			probing[profile] = true
		}
		reserve(cfg, now, budget, spendWhy, d.self)
	}
	if len(batch) == 0 {
		return taken, nil
	}
	// A refused claim (someone else took the card, or it changed) is taken
	// too: the next tick sees the truth. So is a whole batch the database
	// refused as a conflict (PostgreSQL's deadlock or serialization
	// failure against another node's batch): nothing of it was written.
	if _, err := d.claimAll(ctx, batch); err != nil && !errors.Is(err, store.ErrConflict) {
		return taken, err
	}
	return taken + len(batch), nil
}

// profileOf is the agent profile c runs on.
func profileOf(cfg *config.Config, c board.Card) string {
	if c.Agent != "" {
		return c.Agent
	}
	return cfg.Agents.Default
}

func profileNames(cfg *config.Config) []string {
	var out []string
	for n := range cfg.Agents.Profiles {
		out = append(out, n)
	}
	return out
}

// reserve books a run about to start on the day's budget (nil: no day
// cap); a capped day pauses dispatch for the cards after it.
func reserve(cfg *config.Config, now time.Time, budget *policy.DayBudget, spendWhy *string, node *self) {
	if budget == nil {
		return
	}
	budget.Reserve()
	if *spendWhy = budget.Paused(cfg.Limits.DayBoundary.Next(now)); budget.Capped() {
		node.update(func(st *NodeStatus) { st.DispatchPaused = *spendWhy })
	}
}
