package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/budget"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Tick is one pass: reload config, recover dead owners' claims, reconcile
// live runs with the board, and start what is eligible. It returns the
// earliest time something becomes due (zero when nothing is scheduled).
func (d *Dispatcher) Tick(ctx context.Context) time.Time { return d.tickPass(ctx, true) }

// fullEvery bounds how long Run goes without a full pass while wake-ups
// (store changes, finished runs) keep it busy with light ones.
const fullEvery = time.Second

// tickPass is a full pass (Tick) or a light one: a light pass only starts
// what is eligible. Run makes the passes that store changes and finished runs
// wake it for light, and a full one at least every fullEvery: with hundreds
// of live runs, each commit of their progress wakes the node, and reading
// every claimed card, renewing the leader's and the node's rows and
// re-reading the config on each of those wake-ups cost most of a core.
// What the full pass does is time-driven (expired leases, the node's own
// lease) or rare (an operator moving a running card: that run stops within
// fullEvery), so it waits that long at most.
func (d *Dispatcher) tickPass(ctx context.Context, full bool) time.Time {
	if !d.isRegistered() && ctx.Err() == nil {
		// A harness driving Tick without Run takes the name here, by the
		// same rules. Nothing is dispatched under a name not yet held (a
		// store error is retried on the next tick).
		if err := d.register(ctx); err != nil {
			if errors.Is(err, ErrNodeTaken) {
				d.mu.Lock()
				d.nameLost = err
				d.mu.Unlock()
			}
			d.log.Warn("could not take the node name yet", "err", err)
			return time.Time{}
		}
	}
	if d.lostName() != nil {
		return time.Time{} // Run stops; nothing more is claimed under the name
	}
	start := time.Now()
	var next time.Time
	var err error
	if full {
		d.reload()
		next, err = d.tick(ctx)
		d.lastFull, d.fullNext = start, next
	} else {
		next, err = d.dispatch(ctx, d.o.Now())
		if !d.fullNext.IsZero() && (next.IsZero() || d.fullNext.Before(next)) {
			next = d.fullNext // a lease the last full pass waits for
		}
		if due := d.o.Now().Add(fullEvery - time.Since(d.lastFull)); next.IsZero() || due.Before(next) {
			next = due
		}
	}
	now := d.o.Now()
	d.mu.Lock()
	switch {
	case err != nil && ctx.Err() == nil:
		if errors.Is(err, store.ErrUnavailable) && d.storeDown.IsZero() {
			d.storeDown = now
		}
		d.status.StoreError = err.Error()
		if !d.storeDown.IsZero() {
			d.status.StoreError = fmt.Sprintf("the store is unreachable since %s: %v; agents keep running and their writes are retried",
				d.storeDown.UTC().Format(time.RFC3339), err)
		}
		d.log.Error("tick failed; agents keep running and writes are retried", "err", err)
	case err == nil && !d.storeDown.IsZero():
		// Back after an outage: say so for a while, since nobody could read
		// the node's status while the store was away.
		d.status.StoreError = fmt.Sprintf("the store was unreachable from %s to %s (%s); agents kept running and their writes were retried",
			d.storeDown.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), now.Sub(d.storeDown).Round(time.Second))
		d.log.Warn("store reachable again", "down_for", now.Sub(d.storeDown).Round(time.Millisecond))
		d.storeDown, d.storeBack = time.Time{}, now
	case err == nil && !d.storeBack.IsZero() && now.Sub(d.storeBack) > outageNotice:
		d.status.StoreError = ""
	case err == nil && d.storeBack.IsZero():
		d.status.StoreError = ""
	}
	d.lastTick = now
	d.mu.Unlock()
	if !full {
		if d.o.Metrics != nil {
			d.o.Metrics.ObserveTick(time.Since(start))
		}
		return next
	}
	if err := d.touch(ctx, false, ""); errors.Is(err, store.ErrNodeHeld) {
		// Another process took the name after this one's hold lapsed (the
		// store was out of reach for longer than a lease): two processes
		// must never dispatch under one name, so this one stops.
		d.log.Error("another process took this node's name; stopping", "err", err)
		d.mu.Lock()
		d.nameLost = errors.Join(ErrNodeTaken, fmt.Errorf("node name %s was taken by another drover serve while this one could not renew its hold; this process stopped. Give each process its own dispatch.node", d.node))
		d.mu.Unlock()
	} else if err != nil && ctx.Err() == nil {
		d.log.Warn("could not record node status", "err", err)
	}
	if d.o.Metrics != nil {
		d.o.Metrics.ObserveTick(time.Since(start))
	}
	return next
}

func (d *Dispatcher) reload() {
	if d.o.Watcher == nil {
		return
	}
	cfg, changed, err := d.o.Watcher.Check()
	if err == nil {
		// Check reports a refused edit once; it stays the node's config error
		// (in drover status and on the dashboard) until the file loads again.
		err = d.o.Watcher.LastError()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if d.status.ConfigError != err.Error() {
			d.log.Error("config reload failed; keeping the last good config", "err", err)
			cur := d.cfg.Load()
			sum := sha256.Sum256([]byte(err.Error()))
			go d.noticeOnce(context.Background(), cur, "config_error", "config/"+hex.EncodeToString(sum[:8]),
				"WORKFLOW.md edit refused, the last good config stays in force: "+err.Error())
		}
		if d.status.ConfigError != err.Error() || d.status.ConfigErrorSince == nil {
			since := d.o.Now().UTC()
			d.status.ConfigErrorSince = &since
		}
		d.status.ConfigError = err.Error()
		return
	}
	d.status.ConfigError, d.status.ConfigErrorSince = "", nil
	if changed && cfg != nil {
		if msg := config.RestartNeeded(d.cfg.Load(), cfg); len(msg) > 0 {
			d.log.Warn("config changed keys that apply only after a restart", "keys", msg)
		}
		d.cfg.Store(cfg)
		d.usable = map[string]string{}
		d.log.Info("config reloaded", "path", cfg.Path)
	}
}

func (d *Dispatcher) tick(ctx context.Context) (time.Time, error) {
	now := d.o.Now()
	lead, err := d.o.Store.TryLead(ctx, d.node, d.LeaderTTL())
	if err != nil {
		return time.Time{}, err
	}
	// One read of the claimed cards serves recovery (others' leases) and
	// reconciliation (this node's runs), instead of a read per live run.
	claimed, err := d.o.Store.ListCards(ctx, store.CardFilter{Claimed: store.Bool(true)})
	if err != nil {
		return time.Time{}, err
	}
	expiry, err := d.recover(ctx, now, lead, claimed)
	if err != nil {
		return time.Time{}, err
	}
	d.reconcile(claimed)
	d.sweepWorkspaces(ctx, d.cfg.Load())
	next, err := d.dispatch(ctx, now)
	if !expiry.IsZero() && (next.IsZero() || expiry.Before(next)) {
		next = expiry
	}
	return next, err
}

// recover takes back claims whose owner stopped renewing them. Any node may
// try (the compare-and-set on the card's version lets exactly one win): the
// leader does it for everyone as soon as a lease ends, every node does it
// for its own past lives at once, and any node does it for a claim whose
// lease ended a whole lease period ago (the leader itself may be the one
// that died, and its successor is not in place yet). It returns when the
// soonest foreign lease ends, so the leader wakes up for it.
func (d *Dispatcher) recover(ctx context.Context, now time.Time, lead bool, cards []board.Card) (time.Time, error) {
	// Judge other nodes' leases only with a store that has worked for a
	// whole lease period: after an outage (a database restart) every lease
	// looks expired, and live owners need a lease period to renew theirs.
	d.mu.Lock()
	judge := d.storeDown.IsZero() && (d.storeBack.IsZero() || now.Sub(d.storeBack) >= d.lease())
	d.mu.Unlock()
	var soonest time.Time
	for _, c := range cards {
		if d.hasJob(c.ID) {
			continue
		}
		// A claim of ours we hold no job for, last renewed before this process
		// started: a previous life of this node. (A claim renewed since is
		// another live process's under the same name: it waits for its lease.)
		// Also ours: a claim this process wrote whose reply was lost (the
		// store committed, the call failed), so no job was started for it.
		mine := c.Claim.Owner == d.node && (!c.Claim.LeaseUntil.After(d.started.Add(d.lease())) || d.wroteClaim(c.ID, c.Claim.Epoch))
		expired := !c.Claim.LeaseUntil.After(now)
		stale := c.Claim.LeaseUntil.Before(now.Add(-d.lease()))
		if mine || (judge && lead && expired) || (judge && stale) {
			if err := d.recoverCard(ctx, c, mine); err != nil && !errors.Is(err, store.ErrConflict) {
				return time.Time{}, err
			}
			continue
		}
		// Wake up when this lease ends (the leader recovers it then), or a
		// lease period later (anyone does).
		at := c.Claim.LeaseUntil.Add(10 * time.Millisecond)
		if !lead {
			at = at.Add(d.lease())
		}
		if soonest.IsZero() || at.Before(soonest) {
			soonest = at
		}
	}
	return soonest, nil
}

// reconcile stops runs whose card an operator moved away or whose claim this
// node lost; claimed is every claimed card, read in this pass (a run's card
// missing from it is no longer claimed: deleted, released or taken back).
func (d *Dispatcher) reconcile(claimed []board.Card) {
	cfg := d.cfg.Load()
	byID := make(map[string]*board.Card, len(claimed))
	for i := range claimed {
		byID[claimed[i].ID] = &claimed[i]
	}
	for _, j := range d.snapshotJobs() {
		c, ok := byID[j.card.ID]
		if !ok {
			c = &board.Card{}
		}
		switch {
		case c.Claim == nil || c.Claim.Owner != d.node || c.Claim.Epoch != j.claim.Epoch:
			j.cancel(errLeaseLost)
		default:
			switch cfg.Board.RoleOf(c.State) {
			case board.RoleRunning, board.RoleCompleted:
				// still ours to finish (an agent may move its own card on to
				// review); a move into any sink, done included, stops the run
			case board.RoleCancelled:
				j.cancel(&operatorStop{fmt.Sprintf("an operator cancelled %s", c.Identifier)})
			default:
				j.cancel(&operatorStop{fmt.Sprintf("an operator moved %s to %s", c.Identifier, c.State)})
			}
		}
	}
}

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
	breakers, err := d.breakers(ctx)
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
	for _, c := range cards {
		profile := d.profileName(c)
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
			f.Unusable = d.unusable(cfg, profile)
		}
		if len(c.BlockedBy) > 0 {
			f.Blockers = d.blockers(ctx, c)
		}
		if !f.ProfileOK {
			d.blockInvalid(ctx, c, "agent", fmt.Sprintf("the card names agent profile %q, which is not in agents.profiles", profile),
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
		if budget != nil {
			budget.Reserve()
			if *spendWhy = budget.Paused(cfg.Limits.NextDayStart(now)); budget.Capped() {
				d.setSpendPaused(*spendWhy)
			}
		}
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

func (d *Dispatcher) profileName(c board.Card) string {
	if c.Agent != "" {
		return c.Agent
	}
	return d.cfg.Load().Agents.Default
}

func profileNames(cfg *config.Config) []string {
	var out []string
	for n := range cfg.Agents.Profiles {
		out = append(out, n)
	}
	return out
}

// unusable says why this node cannot run a profile (its binary is missing).
func (d *Dispatcher) unusable(cfg *config.Config, profile string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	// A missing binary is looked for again after a while: installing it
	// must not need a restart or a config edit.
	if why, ok := d.usable[profile]; ok && (why == "" || time.Since(d.usableAt[profile]) < 30*time.Second) {
		return why
	}
	p, _ := cfg.Agents.Profile(profile)
	p = resolveCommand(cfg, p)
	why := ""
	if !registry.InProcess(p.Kind) {
		cmd := p.Command
		if cmd == "" {
			cmd = p.Kind
		}
		if _, err := exec.LookPath(cmd); err != nil {
			why = fmt.Sprintf("agent %s: command %q is not found on this node (agents.profiles.%s.command)", profile, cmd, profile)
		}
	}
	d.usable[profile] = why
	d.usableAt[profile] = time.Now()
	if why != "" {
		if d.status.Unusable == nil {
			d.status.Unusable = map[string]string{}
		}
		d.status.Unusable[profile] = why
	} else if d.status.Unusable != nil {
		delete(d.status.Unusable, profile)
	}
	return why
}

// resolveCommand makes a relative command path (./agent.sh) relative to the
// WORKFLOW.md it was written in, not to the card's workspace.
func resolveCommand(cfg *config.Config, p agent.Profile) agent.Profile {
	if strings.Contains(p.Command, "/") && !filepath.IsAbs(p.Command) && cfg.Path != "" {
		p.Command = filepath.Join(filepath.Dir(cfg.Path), p.Command)
	}
	return p
}

func (d *Dispatcher) slotsFree(cfg *config.Config) int {
	n := cfg.Dispatch.MaxConcurrent
	if n <= 0 {
		n = 1
	}
	return n - d.Running()
}

func (d *Dispatcher) stateFree(cfg *config.Config, state string) int {
	limit, ok := cfg.Dispatch.MaxConcurrentByState[state]
	if !ok {
		return -1
	}
	n := 0
	for _, j := range d.snapshotJobs() {
		if j.fromState == state {
			n++
		}
	}
	return limit - n
}

func (d *Dispatcher) blockers(ctx context.Context, c board.Card) []board.Card {
	var out []board.Card
	for _, id := range c.BlockedBy {
		if b, err := d.o.Store.GetCard(ctx, id); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// spendPaused reads the day's budget and says why it pauses dispatch ("" when
// it does not); offer reserves each run it starts on the budget it returns.
func (d *Dispatcher) spendPaused(ctx context.Context, cfg *config.Config, now time.Time) (string, *policy.DayBudget, error) {
	why := ""
	var b *policy.DayBudget
	if cfg.Limits.MaxCostPerDayUSD > 0 {
		got, err := budget.ReadDay(ctx, d.o.Store, cfg.Limits, now)
		if err != nil {
			return "", nil, err
		}
		b = &got
		why = b.Paused(cfg.Limits.NextDayStart(now))
	}
	// Only a capped day is an error an operator sees (dispatch_paused); one
	// run at a time for want of an estimate is not.
	paused := ""
	if b != nil && b.Capped() {
		paused = why
		d.noticeOnce(ctx, cfg, "spend_paused", "spend/"+dayKey(b.DayStart)+"/paused", why)
	}
	d.setSpendPaused(paused)
	return why, b, nil
}

func (d *Dispatcher) setSpendPaused(why string) {
	d.mu.Lock()
	d.status.DispatchPaused = why
	d.mu.Unlock()
}
