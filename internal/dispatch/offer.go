package dispatch

import (
	"cmp"
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
	ps, err := newPass(ctx, d.o.Store, cfg, now, spendWhy, budget)
	if err != nil {
		return time.Time{}, err
	}
	ps.usable, ps.node = &d.usable, d.self
	next := ps.reopens()
	// The soonest scheduled retry sets the wake-up timer.
	later, err := d.o.Store.ListCards(ctx, store.CardFilter{States: eligible, Claimed: store.Bool(false), ScheduledAfter: &now, Order: store.OrderNextAttempt, Limit: 1})
	if err != nil {
		return time.Time{}, err
	}
	if len(later) == 1 && (next.IsZero() || later[0].NextAttemptAt.Before(next)) {
		next = *later[0].NextAttemptAt
	}
	// Due cards in board order, a page at a time, only while slots are free:
	// a tick's work follows the free slots, not the size of the backlog.
	for skipped := 0; d.slotsFree(cfg) > 0; {
		// A page sized by the free slots (twice over, for cards the checks
		// turn away), up to 200: a node with 3 free slots of 100 reads a
		// handful of cards, not 200, on each of its many wake-ups.
		page := min(max(2*d.slotsFree(cfg), 16), 200)
		cards, err := d.o.Store.ListCards(ctx, store.CardFilter{States: eligible, Claimed: store.Bool(false), DueBy: &now, Limit: page, Offset: skipped})
		if err != nil {
			return next, err
		}
		taken, err := d.offer(ctx, cfg, cards, ps)
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

// pass is what one dispatch pass knows while it offers pages of cards: the
// day's spend (nil budget = no day cap), the breakers as the pass began,
// the profiles whose probe it has claimed, and each capped profile's live
// runs across the nodes.
type pass struct {
	now      time.Time
	spendWhy string
	budget   *policy.DayBudget
	breakers map[string]breaker
	probing  map[string]bool
	live     map[string]int
	usable   *usability // this node's findings of profiles it cannot run
	node     *self
}

// newPass reads what a pass starts from: the breakers and the capped
// profiles' live runs.
func newPass(ctx context.Context, st store.Store, cfg *config.Config, now time.Time, spendWhy string, budget *policy.DayBudget) (*pass, error) {
	breakers, err := readBreakers(ctx, st)
	if err != nil {
		return nil, err
	}
	live, err := liveByProfile(ctx, st, cfg)
	if err != nil {
		return nil, err
	}
	return &pass{now: now, spendWhy: spendWhy, budget: budget, breakers: breakers, probing: map[string]bool{}, live: live}, nil
}

// reopens is the soonest time a breaker's hold ends (zero: none holds).
func (ps *pass) reopens() time.Time {
	var next time.Time
	for _, st := range ps.breakers {
		if st.Until != nil && st.Until.After(ps.now) && (next.IsZero() || st.Until.Before(next)) {
			next = *st.Until
		}
	}
	return next
}

// avail is what the pass knows of profile p: held (its breaker, a pause,
// its probe already out), not runnable on this node, or at its
// max_concurrent.
func (ps *pass) avail(cfg *config.Config, p string) availability {
	var a availability
	ok, probe, why := policy.Allow(ps.breakers[p].BreakerState, ps.now)
	switch {
	case probe && ps.probing[p]:
		a.held = "a probe run for " + p + " is already on its way"
	case !ok:
		a.held = cmp.Or(why, "agent profile "+p+" is held")
	}
	if _, known := cfg.Agents.Profile(p); !known {
		a.unusable = fmt.Sprintf("profile %q is not in agents.profiles", p)
	} else {
		a.unusable = ps.usable.check(cfg, p, ps.node)
	}
	if n, capped := cfg.Agents.MaxConcurrent[p]; capped && ps.live[p] >= n {
		a.full = fmt.Sprintf("agents.profiles.%s.max_concurrent (%d) is reached: %d runs live across the nodes", p, n, ps.live[p])
	}
	return a
}

// choose is where c runs in this pass. A link of the chain the card's
// input does not fit (its spec_schema, its kind's spec check) is skipped,
// not a reason to block the card: its own profile takes it back later.
func (ps *pass) choose(cfg *config.Config, c board.Card) choice {
	base := profileOf(cfg, c)
	return choose(c.Labels, c.Agent, routesOf(cfg), func(p string) availability {
		a := ps.avail(cfg, p)
		if p != base && a.held == "" && a.busy() == "" && len(inputProblems(cfg, c, p)) > 0 {
			a.unusable = "the card's input does not fit " + p
		}
		return a
	})
}

// offer checks each card of a page and claims the eligible ones while slots
// are free, all of the page's claims in one store transaction (claimAll).
// Each card runs on the profile choose picks (its own, its route's or the
// default, or a fallback while that one is held). Each run it is about to
// start is reserved on the day's budget, which may pause dispatch for the
// cards after it. It returns how many cards left the due set (claimed,
// blocked, or taken by another node).
func (d *Dispatcher) offer(ctx context.Context, cfg *config.Config, cards []board.Card, ps *pass) (int, error) {
	taken := 0
	var batch []claimReq
	inState := map[string]int{} // the batch's claims by the state they leave
	for _, c := range probeOrder(ctx, d.o.Store, cards, ps.breakers, ps.now, func(c board.Card) string { return ps.choose(cfg, c).profile }) {
		ch := ps.choose(cfg, c)
		profile := ch.profile
		a := ps.avail(cfg, profile)
		_, probe, _ := policy.Allow(ps.breakers[profile].BreakerState, ps.now)
		f := Facts{Board: cfg.Board, Card: c, Now: ps.now, Profile: profile, BreakerOK: a.held == "", BreakerWhy: ch.wait,
			Unusable: a.unusable, Full: a.full,
			SpendWhy: ps.spendWhy, SlotsFree: d.slotsFree(cfg) - len(batch), StateFree: d.stateFree(cfg, c.State)}
		if f.StateFree >= 0 {
			f.StateFree -= inState[c.State]
		}
		_, f.ProfileOK = cfg.Agents.Profile(profile)
		if len(c.BlockedBy) > 0 {
			f.Blockers = blockersOf(ctx, d.o.Store, c)
		}
		if !f.ProfileOK {
			f.Unusable = ""
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
		batch = append(batch, claimReq{card: c, profile: profile, probe: probe, why: ch.why})
		inState[c.State]++
		ps.live[profile]++
		if probe {
			ps.probing[profile] = true
		}
		reserve(cfg, ps.now, ps.budget, &ps.spendWhy, d.self)
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

// liveByProfile counts the open runs of each profile with a max_concurrent,
// across every node sharing the store (nil, and nothing read, when no
// profile has one).
func liveByProfile(ctx context.Context, st store.Store, cfg *config.Config) (map[string]int, error) {
	live := map[string]int{}
	if len(cfg.Agents.MaxConcurrent) == 0 {
		return live, nil
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{Open: store.Bool(true)})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		live[r.Agent]++
	}
	return live, nil
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
