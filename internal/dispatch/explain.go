package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/budget"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// Explanation answers "why is this card (not) running, and what happens next?"
type Explanation struct {
	Identifier string     `json:"identifier"`
	Title      string     `json:"title"`
	State      string     `json:"state"`
	Role       board.Role `json:"role"`
	Agent      string     `json:"agent"`
	// AgentBy says what chose Agent (the card's own agent, a label route,
	// the default); Fallback is Agent's chain; RunsOn, when set, is the
	// link of the chain the card runs on now that Agent is held, and
	// RunsOnWhy why.
	AgentBy    string              `json:"agent_by"`
	Fallback   []string            `json:"fallback,omitempty"`
	RunsOn     string              `json:"runs_on,omitempty"`
	RunsOnWhy  string              `json:"runs_on_why,omitempty"`
	RetryEpoch int                 `json:"retry_epoch"`
	Running    bool                `json:"running"`
	Checks     []Check             `json:"checks"`
	History    []HistoryLine       `json:"history"`
	Budgets    []policy.BudgetLine `json:"budgets"`
	NextAt     *time.Time          `json:"next_attempt_at"`
	Next       string              `json:"next"`
	Block      *board.BlockReason  `json:"block_reason"`
	// Fresh: for a card waiting on a retry, what the next attempt has that
	// the last did not (nil otherwise).
	Fresh  *Fresh        `json:"next_attempt_new,omitempty"`
	GaveUp *board.GaveUp `json:"gave_up"`
	// Pull is what the card's pull request waits for ("" without one).
	Pull string `json:"pull_request,omitempty"`
}

// HistoryLine is one run of the current retry epoch.
type HistoryLine struct {
	RunID    string        `json:"run_id"`
	Attempt  int           `json:"attempt"`
	Outcome  board.Outcome `json:"outcome"`
	Kind     string        `json:"kind"`
	Counted  bool          `json:"counted"`
	Decision string        `json:"decision"`
	At       *time.Time    `json:"at"`
}

// Explain gathers the facts about one card as the dispatcher would see them
// (without this node's in-memory slot count: slots are taken from the nodes'
// records) and runs the same eligibility rule.
func Explain(ctx context.Context, st store.Store, cfg *config.Config, ref string, now time.Time) (Explanation, error) {
	c, err := st.GetCard(ctx, ref)
	if err != nil {
		return Explanation{}, err
	}
	ch, full, err := explainChoice(ctx, st, cfg, c, now)
	if err != nil {
		return Explanation{}, err
	}
	profile := ch.profile
	e := Explanation{Identifier: c.Identifier, Title: c.Title, State: c.State, Role: cfg.Board.RoleOf(c.State), Agent: ch.base,
		AgentBy: ch.by, Fallback: cfg.Agents.Fallback[ch.base],
		RetryEpoch: c.RetryEpoch, Running: c.Claim != nil, NextAt: c.NextAttemptAt, Block: c.BlockReason, GaveUp: c.GaveUp}
	if ch.why != "" {
		e.RunsOn, e.RunsOnWhy = ch.profile, ch.why
	}
	f, anyNode, err := explainFacts(ctx, st, cfg, c, profile, now)
	if err != nil {
		return e, err
	}
	f.Full = full
	if !f.BreakerOK {
		f.BreakerWhy += ch.chain // what the chain or the opt-out label found, after the profile's own reason
	}
	e.Checks = Eligible(f)
	epoch := c.RetryEpoch
	runs, err := st.ListRuns(ctx, store.RunFilter{CardID: c.ID, RetryEpoch: &epoch})
	if err != nil {
		return e, err
	}
	for _, r := range runs {
		at := r.FinishedAt
		if at == nil {
			at = &r.ClaimedAt
		}
		e.History = append(e.History, HistoryLine{r.ID, r.Attempt, r.Outcome, r.Kind, r.Counted, r.Decision, at})
	}
	e.Budgets = policy.Budgets(cfg.Policy, runs)
	if e.Fresh, err = freshness(ctx, st, cfg, c, profile, runs); err != nil {
		return e, err
	}
	e.Next = nextStep(e, c, now, anyNode)
	if e.Pull = pullExplain(c, e.Role, runs, cfg.Policy); e.Pull != "" {
		if e.Role == board.RoleCompleted || e.Role.IsSink() {
			e.Next = e.Pull
		} else {
			e.Next = e.Pull + "; " + e.Next
		}
	}
	return e, nil
}

// explainChoice is the profile c would run on now, as offer would choose
// it from the stored breakers and live runs (this node's usability aside),
// and why that profile has no room ("" when it has).
func explainChoice(ctx context.Context, st store.Store, cfg *config.Config, c board.Card, now time.Time) (choice, string, error) {
	bs, err := readBreakers(ctx, st)
	if err != nil {
		return choice{}, "", err
	}
	live, err := liveByProfile(ctx, st, cfg)
	if err != nil {
		return choice{}, "", err
	}
	nodes, err := st.ListNodes(ctx)
	if err != nil {
		return choice{}, "", err
	}
	base := profileOf(cfg, c)
	avail := func(p string) availability {
		var a availability
		if ok, _, why := policy.Allow(bs[p].BreakerState, now); !ok {
			a.held = cmp.Or(why, "agent profile "+p+" is "+string(bs[p].State)+": "+bs[p].Reason)
		}
		a.unusable = unusableOn(nodes, now, p)
		if p != base && a.unusable == "" && len(inputProblems(cfg, c, p)) > 0 {
			a.unusable = "the card's input does not fit " + p
		}
		if n, capped := cfg.Agents.MaxConcurrent[p]; capped && live[p] >= n {
			a.full = fmt.Sprintf("agents.profiles.%s.max_concurrent (%d) is reached: %d runs live across the nodes", p, n, live[p])
		}
		return a
	}
	ch := choose(c.Labels, c.Agent, routesOf(cfg), avail)
	return ch, avail(ch.profile).full, nil
}

// unusableOn is why a live node cannot run profile, as its status says
// ("" when every live node can).
func unusableOn(nodes []store.Node, now time.Time, profile string) string {
	why := ""
	for _, n := range nodes {
		var ns NodeStatus
		if now.Sub(n.SeenAt) < 2*time.Minute && json.Unmarshal(n.Status, &ns) == nil && ns.Unusable[profile] != "" {
			why = ns.Unusable[profile]
		}
	}
	return why
}

// explainFacts are the eligibility facts of c as the store holds them:
// blockers, the profile's breaker, the live nodes' slots and usability,
// the day's spend. anyNode: some drover serve has run against the store.
func explainFacts(ctx context.Context, st store.Store, cfg *config.Config, c board.Card, profile string, now time.Time) (Facts, bool, error) {
	f := Facts{Board: cfg.Board, Card: c, Now: now, Profile: profile, BreakerOK: true, SlotsFree: 1, StateFree: -1}
	_, f.ProfileOK = cfg.Agents.Profile(profile)
	f.Blockers = blockersOf(ctx, st, c)
	var err error
	if f.Cycle, err = cycleOf(ctx, st, c); err != nil {
		return f, false, err
	}
	bs, err := readBreakers(ctx, st)
	if err != nil {
		return f, false, err
	}
	if b, ok := bs[profile]; ok {
		ok, _, why := policy.Allow(b.BreakerState, now)
		f.BreakerOK, f.BreakerWhy = ok, why
		if !ok && why == "" {
			f.BreakerWhy = fmt.Sprintf("agent profile %s is %s: %s; drover agent resume %s", profile, b.State, b.Reason, profile)
		}
		if probe := b.ProbeTests(); probe != "" && !ok {
			f.BreakerWhy += "; the probe will test " + probe
		}
	}
	nodes, err := st.ListNodes(ctx)
	if err != nil {
		return f, false, err
	}
	running, capacity := 0, 0
	for _, n := range nodes {
		if now.Sub(n.SeenAt) < 2*time.Minute {
			running += n.Running
			capacity += max(cfg.Dispatch.MaxConcurrent, 1)
		}
	}
	f.Unusable = unusableOn(nodes, now, profile)
	if capacity > 0 {
		f.SlotsFree = capacity - running
	}
	if cfg.Limits.MaxCostPerDayUSD > 0 && c.Claim == nil {
		b, err := budget.ReadDay(ctx, st, cfg.Limits, now)
		if err != nil {
			return f, false, err
		}
		f.SpendWhy = b.Paused(cfg.Limits.DayBoundary.Next(now))
	}
	return f, len(nodes) > 0, nil
}

// cycleOf is the loop of identifiers by which c waits on itself (nil: none).
func cycleOf(ctx context.Context, st store.Store, c board.Card) ([]string, error) {
	get := func(id string) (board.Card, bool, error) {
		b, err := st.GetCard(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return b, false, nil
		}
		return b, err == nil, err
	}
	for _, id := range c.BlockedBy {
		path, err := board.WaitPath(id, c.ID, get)
		if err != nil || path != nil {
			if path != nil {
				path = append(append([]string{c.Identifier}, path...), c.Identifier)
			}
			return path, err
		}
	}
	return nil, nil
}

func nextStep(e Explanation, c board.Card, now time.Time, anyNode bool) string {
	switch {
	case e.Running:
		return fmt.Sprintf("a run is live on %s; its outcome will be routed by the failure policy", c.Claim.Owner)
	case e.Role.IsSink():
		how := "drover card resume " + c.Identifier
		if c.BlockReason != nil && c.BlockReason.How != "" {
			how = c.BlockReason.How
		}
		if e.Role == board.RoleDone {
			how = "drover card reopen " + c.Identifier
		}
		return fmt.Sprintf("nothing: %s is a sink and automation never takes a card out; to run it again: %s", c.State, how)
	case e.Role == board.RoleParked:
		return "waiting for a human answer: drover card answer " + c.Identifier + " TEXT"
	case e.Role != board.RoleEligible:
		return fmt.Sprintf("nothing until it is moved to an eligible column (drover card mv %s ready)", c.Identifier)
	case !AllOK(e.Checks):
		for _, ch := range e.Checks {
			if !ch.OK {
				return "waiting: " + ch.Name + " — " + ch.Hint
			}
		}
	case !anyNode:
		return "eligible now; no drover serve has run against this store yet (start one with drover serve)"
	}
	return "eligible now: the next dispatcher tick claims it"
}
