package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/tracing"
	"github.com/drover-dev/drover/internal/workspace"
)

// routeOnce writes a finished run's outcome in one transaction, guarded by
// the claim (owner, epoch) and by "this run has no outcome yet". It re-reads
// and re-decides when an operator changed the card meanwhile, retries while
// the store is unreachable, and gives up only when the run was routed by
// someone else or the claim was lost (then only the run is marked).
func (d *Dispatcher) routeOnce(ctx context.Context, cardID string, claim board.Claim, run board.Run, cls policy.Classification, res *agent.Result, recovering bool) (err error) {
	ctx, sp := tracing.Start(ctx, tracing.SpanRoute, tracing.Recovered(recovering))
	defer func() { tracing.End(sp, err) }()
	return d.routeRetry(ctx, cardID, claim, run, cls, res, recovering)
}

// routeRetry is routeOnce without its span.
func (d *Dispatcher) routeRetry(ctx context.Context, cardID string, claim board.Claim, run board.Run, cls policy.Classification, res *agent.Result, recovering bool) error {
	backoff := 200 * time.Millisecond
	for conflicts := 0; ; {
		// One routing at a time in this process: breakerChange reads the
		// profile's breaker and writes it back in the routing transaction.
		// The breaker row's version makes a lost update impossible across
		// processes; the lock keeps this process's routings from retrying
		// against each other.
		d.routeMu.Lock()
		err := d.routeTry(ctx, cardID, claim, run, cls, res, recovering)
		d.routeMu.Unlock()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errRouted), errors.Is(err, errRenewed):
			return nil
		case errors.Is(err, store.ErrConflict):
			// The card moved on meanwhile: read it again and decide again.
			// Each retry sees a newer version, so this ends; the bound is a
			// guard against a store that keeps refusing for another reason.
			if conflicts++; conflicts > 50 {
				return fmt.Errorf("routing run %s: still conflicting after %d tries: %w", run.ID, conflicts, err)
			}
			continue
		case errors.Is(err, store.ErrUnavailable) && ctx.Err() == nil:
			d.log.Warn("store unavailable while routing; retrying", "run_id", run.ID, "err", err)
			select {
			case <-ctx.Done():
				return err
			case <-d.o.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		default:
			return err
		}
	}
}

var (
	errRouted  = errors.New("already routed")
	errRenewed = errors.New("the owner renewed its lease: not recovered")
)

// routeTry decides and writes one routing (the caller holds routeMu).
func (d *Dispatcher) routeTry(ctx context.Context, cardID string, claim board.Claim, run board.Run, cls policy.Classification, res *agent.Result, recovering bool) error {
	bs, err := d.breakers(ctx)
	if err != nil {
		return err
	}
	r, err := d.prepareRoute(ctx, cardID, claim, run, cls, res, recovering, bs, nil)
	if err != nil {
		return err
	}
	err = d.o.Store.Apply(ctx, r.ch)
	if err != nil && r.lost && errors.Is(err, store.ErrConflict) {
		return errRouted
	}
	if err == nil || r.lost {
		r.written(err == nil)
	}
	return err
}

// routing is one run's routing, decided and ready to write: the change,
// and what follows once it is written (traces, metrics, the log line, the
// workspace's cleanup).
type routing struct {
	ch store.Change
	// lost: the claim is gone, and the change records only the run; its
	// conflict means someone else routed the run.
	lost    bool
	written func(ok bool)
}

// prepareRoute reads the card, the run and the epoch's history and decides
// the routing, with the breakers as bs says they are (read under routeMu).
// errRouted: the run has an outcome already; errRenewed: a recovery whose
// owner renewed its lease.
//
// in, when set, holds the card and its runs as read for a whole group of
// routings (routeGroupOnce); nil reads them here.
func (d *Dispatcher) prepareRoute(ctx context.Context, cardID string, claim board.Claim, run board.Run, cls policy.Classification, res *agent.Result, recovering bool, bs map[string]breaker, in *routeInputs) (*routing, error) {
	cfg := d.cfg.Load()
	now := d.o.Now().UTC()
	card, stored, history, err := in.read(ctx, d.o.Store, cardID, run.ID)
	if err != nil {
		return nil, err
	}
	if !stored.Open() {
		return nil, errRouted
	}
	cls = policy.ApplyReport(cls, stored.Report) // the agent's own report (drover mcp), see report.go
	fin := stored
	fin.FinishedAt = &now
	if res != nil {
		p, _ := cfg.Agents.Profile(stored.Agent)
		fillRun(&fin, res, p)
	}
	if card.Claim == nil || card.Claim.Owner != claim.Owner || card.Claim.Epoch != claim.Epoch {
		// Our claim is gone: a stale owner writes nothing to the card.
		fin.Outcome, fin.Kind, fin.Decision = board.OutcomeLeaseLost, string(cls.Kind), "claim lost; the card belongs to its new owner"
		return &routing{lost: true, ch: store.Change{Run: &fin, RunMustBeOpen: true, Events: []board.Event{{At: now, CardID: cardID, RunID: run.ID,
			Type: board.EvLeaseLost, Actor: d.actor(), Reason: "run stopped: the claim passed to another owner"}}},
			written: func(ok bool) {
				if ok {
					tracing.Routed(ctx, fin.Outcome, fin.Kind, "", card.State, fin.Decision)
				}
				d.count(fin)
			}}, nil
	}
	// Recovering another node's claim: only while its lease is still over.
	var leaseEndedBy *time.Time
	if recovering && claim.Owner != d.node {
		if card.Claim.LeaseUntil.After(now) {
			return nil, errRenewed
		}
		leaseEndedBy = &now
	}
	history = currentLast(history, fin)
	profile := fin.Agent
	var dec policy.Decision
	if res != nil && res.Signals.KilledFor == "spend" && !cfg.Board.RoleOf(card.State).IsSink() {
		// What the epoch really cost: the stored runs' figures can lag (live
		// progress is written at most once a second), the finishing run's
		// own figure is the one it ends with.
		spent := fin.CostUSD
		for _, r := range history {
			if r.ID != fin.ID {
				spent += r.CostUSD
			}
		}
		dec = policy.SpendBlock(card, policy.SpendLimits{PerDay: cfg.Limits.MaxCostPerDayUSD, PerCard: cfg.Limits.MaxCostPerCardUSD}, spent, run.ID, blockedColumn(cfg))
	} else {
		dec = policy.Decide(policy.Input{Config: cfg.Policy, Card: card, CardRole: cfg.Board.RoleOf(card.State), Classification: cls,
			History: history, Now: now, Rand: d.o.Rand, FailedState: cfg.Policy.FailedState, BlockedState: blockedColumn(cfg),
			EligibleState: column(cfg, board.RoleEligible), ParkedState: column(cfg, board.RoleParked),
			CompletedState: completedColumn(cfg), LogPath: fin.LogPath, Workspace: fin.Workspace, AgentProfile: profile,
			ProfileBreakerTripped: outage(bs, profile), Report: stored.Report})
	}
	fin.Outcome, fin.Kind, fin.Counted, fin.Decision = dec.Outcome, string(dec.Kind), dec.Counted, dec.Explain
	if fin.Error == "" && cls.Kind != policy.KindSucceeded {
		fin.Error = excerpt.Clip(cls.Message, 2000)
	}
	next := card
	next.Claim = nil
	if dec.NextState != "" {
		next.State = dec.NextState
	}
	next.StateReason = dec.Explain
	next.NextAttemptAt = dec.NextAttemptAt
	if dec.BlockReason != nil {
		next.BlockReason = dec.BlockReason
	}
	if dec.GaveUp != nil {
		next.GaveUp = dec.GaveUp
	}
	if cfg.Board.RoleOf(next.State) == board.RoleCompleted || cfg.Board.RoleOf(next.State) == board.RoleDone {
		next.BlockReason = nil
	}
	evType := dec.Event
	if evType == "" {
		evType = board.EvFinished
	}
	data := map[string]any{"attempt": fin.Attempt, "kind": fin.Kind, "verb": dec.Verb, "counted": fin.Counted,
		"next_attempt_at": dec.NextAttemptAt, "source": cls.Source, "to": next.State}
	q := ""
	if dec.Verb == policy.VerbPark {
		q = question(cls, res)
		// The parked event keeps the whole question for the next attempt's
		// prompt (see conversation).
		data["question"] = q
	}
	if len(fin.Argv) > 0 {
		data["argv"] = fin.Argv // what ran, secrets redacted, in the audit log too
	}
	ch := store.Change{Card: &next, ClaimGuard: &claim, LeaseEndedBy: leaseEndedBy, Run: &fin, RunMustBeOpen: true,
		Events: []board.Event{{At: now, CardID: cardID, RunID: run.ID, Type: evType, Actor: d.actor(), Reason: dec.Explain,
			Data: jsonOf(data)}}}
	if r := dec.BlockReason; r != nil {
		ch.Comments = append(ch.Comments, board.Comment{CardID: cardID, Author: d.actor(), Body: reasonText(r), At: now})
	}
	if dec.Verb == policy.VerbPark {
		ch.Comments = append(ch.Comments, board.Comment{CardID: cardID, Author: "agent:" + profile, Body: "Question: " + q, At: now})
	}
	for _, ev := range dec.Notify {
		if ev == policy.NotifyProfilePaused {
			continue // breakerChange notifies once per transition of the profile, not once per card
		}
		ch.Outbox = append(ch.Outbox, d.outbox(cfg, Notice{Event: ev, Key: cardID + "/" + run.ID + "/" + ev, Card: next, Run: &fin,
			Reason: next.BlockReason, GaveUp: dec.GaveUp, Profile: profile, Question: questionOf(ch.Comments), At: now})...)
	}
	d.breakerChange(cfg, &ch, bs, profile, policy.CardRef{ID: card.ID, Identifier: card.Identifier}, cls, dec, now)
	return &routing{ch: ch, written: func(bool) {
		tracing.Routed(ctx, fin.Outcome, fin.Kind, string(dec.Verb), next.State, dec.Explain)
		d.count(fin)
		d.log.Info("run finished", "card_id", cardID, "identifier", card.Identifier, "run_id", run.ID, "attempt", fin.Attempt,
			"outcome", fin.Outcome, "kind", fin.Kind, "counted", fin.Counted, "verb", dec.Verb, "state", next.State, "why", dec.Explain)
		d.cleanup(cfg, next, fin)
	}}, nil
}

// routeInputs are the cards and runs a group of routings reads, with one
// query each.
type routeInputs struct {
	cards map[string]board.Card
	runs  map[string][]board.Run // by card
}

// loadRouteInputs reads the cards of cardIDs and all their runs.
func loadRouteInputs(ctx context.Context, st store.Store, cardIDs []string) (*routeInputs, error) {
	cards, err := st.ListCards(ctx, store.CardFilter{IDs: cardIDs})
	if err != nil {
		return nil, err
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{CardIDs: cardIDs})
	if err != nil {
		return nil, err
	}
	in := &routeInputs{cards: make(map[string]board.Card, len(cards)), runs: map[string][]board.Run{}}
	for _, c := range cards {
		in.cards[c.ID] = c
	}
	for _, r := range runs {
		in.runs[r.CardID] = append(in.runs[r.CardID], r)
	}
	return in, nil
}

// read is a routing's card, its run as stored, and the runs of the card's
// current retry epoch: from in, or from the store when in is nil.
func (in *routeInputs) read(ctx context.Context, st store.Store, cardID, runID string) (board.Card, board.Run, []board.Run, error) {
	if in == nil {
		card, err := st.GetCard(ctx, cardID)
		if err != nil {
			return card, board.Run{}, nil, err
		}
		stored, err := st.GetRun(ctx, runID)
		if err != nil {
			return card, stored, nil, err
		}
		epoch := card.RetryEpoch
		history, err := st.ListRuns(ctx, store.RunFilter{CardID: cardID, RetryEpoch: &epoch})
		return card, stored, history, err
	}
	card, ok := in.cards[cardID]
	if !ok {
		return card, board.Run{}, nil, store.ErrNotFound
	}
	var stored board.Run
	found := false
	var history []board.Run
	for _, r := range in.runs[cardID] {
		if r.ID == runID {
			stored, found = r, true
		}
		if r.RetryEpoch == card.RetryEpoch {
			history = append(history, r)
		}
	}
	if !found {
		return card, stored, nil, store.ErrNotFound
	}
	return card, stored, history, nil
}

// question is what a parked run asked: the question the classifier read (a
// tool call, the QUESTION: line), else the agent's structured question, else
// its final text, else the classification's message.
func question(cls policy.Classification, res *agent.Result) string {
	if cls.Question != "" {
		return cls.Question
	}
	if res != nil && !policy.FromAgent(cls.Source) {
		if st := res.Signals.Structured; st.Question != "" {
			return st.Question
		} else if st.ResultText != "" {
			return st.ResultText
		}
	}
	return cls.Message
}

// currentLast orders the epoch's runs by attempt with the finishing run last.
func currentLast(runs []board.Run, cur board.Run) []board.Run {
	out := make([]board.Run, 0, len(runs))
	for _, r := range runs {
		if r.ID != cur.ID && !r.Open() {
			out = append(out, r)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Attempt < out[j-1].Attempt; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return append(out, cur)
}

// fillRun copies the agent's figures onto the run. Without a reported cost,
// tokens are priced by the profile's price_in/out_per_mtok.
func fillRun(r *board.Run, res *agent.Result, p agent.Profile) {
	s := res.Signals
	if s.ExitCode >= 0 && !s.Signaled {
		code := s.ExitCode
		r.ExitCode = &code
	}
	st := s.Structured
	if st.TokensIn > 0 || st.TokensOut > 0 {
		r.TokensIn, r.TokensOut = st.TokensIn, st.TokensOut
	}
	switch {
	case st.CostKnown || st.CostUSD > 0:
		r.CostUSD = st.CostUSD
	case p.PriceInPerMTok > 0 || p.PriceOutPerMTok > 0:
		r.CostUSD = float64(r.TokensIn)*p.PriceInPerMTok/1e6 + float64(r.TokensOut)*p.PriceOutPerMTok/1e6
	}
	if res.LastLine != "" {
		r.LastOutput = excerpt.Clip(res.LastLine, 500)
	}
	if st.SessionID != "" {
		r.SessionID = st.SessionID
	}
}

// outage reports whether profile's breaker is open or probing for
// provider_unavailable: the provider is failing for other cards too, so a
// give-up must not blame the card.
func outage(bs map[string]breaker, profile string) bool {
	st := bs[profile].BreakerState
	return (st.State == policy.BreakerOpen || st.State == policy.BreakerHalfOpen) && st.Kind == policy.KindProviderUnavailable
}

// breakerChange records what a profile-level failure (or a probe's result)
// does to the profile's breaker, in the same transaction as the routing.
func (d *Dispatcher) breakerChange(cfg *config.Config, ch *store.Change, bs map[string]breaker, profile string, card policy.CardRef, cls policy.Classification, dec policy.Decision, now time.Time) {
	st := bs[profile].BreakerState
	before, _ := json.Marshal(st)
	retryAt := cls.RetryAt
	if retryAt.IsZero() && cls.RetryAfter > 0 {
		retryAt = now.Add(cls.RetryAfter)
	}
	if st.State == policy.BreakerHalfOpen && st.ProbeCardID == card.ID {
		st = policy.ProbeResult(cfg.Policy, st, !policy.Spec(dec.Kind).ProfileLevel(), now)
	}
	if policy.Spec(dec.Kind).ProfileLevel() {
		st, _ = policy.Observe(cfg.Policy, st, dec.Kind, card, now, retryAt)
	}
	if p := dec.PauseProfile; p != nil && st.State != policy.BreakerPaused && p.Until == nil {
		st = policy.BreakerState{State: policy.BreakerPaused, Kind: p.Kind, Reason: p.Reason, Since: &now}
	}
	after, _ := json.Marshal(st)
	if string(before) == string(after) {
		return
	}
	ch.AgentState = agentState(profile, st, bs[profile].version, now)
	if st.State != bs[profile].State {
		ch.Events = append(ch.Events, board.Event{At: now, Type: "agent_" + st.State, Actor: d.actor(),
			Reason: fmt.Sprintf("agent profile %s is %s: %s", profile, st.State, st.Reason), Data: jsonOf(map[string]any{"agent": profile, "until": st.Until})})
		if st.State == policy.BreakerPaused || st.State == policy.BreakerOpen {
			ch.Outbox = append(ch.Outbox, d.outbox(cfg, Notice{Event: policy.NotifyProfilePaused, Key: "agent/" + profile + "/" + now.Format(time.RFC3339Nano) + "/" + st.State,
				Profile: profile, Text: fmt.Sprintf("agent profile %s is %s: %s", profile, st.State, st.Reason), At: now})...)
		}
	}
}

// cleanup removes the workspace per workspace.cleanup once the card is in a sink.
func (d *Dispatcher) cleanup(cfg *config.Config, c board.Card, r board.Run) {
	if r.Workspace == "" || !workspace.ShouldRemove(cfg.Workspace.Cleanup, cfg.Board.RoleOf(c.State)) {
		return
	}
	hooks := workspace.Hooks{BeforeRemove: cfg.Hooks.BeforeRemove, Timeout: cfg.Hooks.Timeout}
	_ = hooks.Run(context.Background(), workspace.HookBeforeRemove, r.Workspace, envSlice(map[string]string{"DROVER_CARD_ID": c.ID, "DROVER_CARD_IDENTIFIER": c.Identifier, "DROVER_WORKSPACE": r.Workspace}), nil)
	if err := workspace.Remove(cfg.Workspace.Root, r.Workspace); err != nil {
		d.log.Warn("could not remove a workspace", "card_id", c.ID, "identifier", c.Identifier, "workspace", r.Workspace, "err", err)
	}
}

func (d *Dispatcher) count(r board.Run) {
	if d.o.Metrics != nil {
		d.o.Metrics.ObserveRun(r)
	}
}

func (d *Dispatcher) actor() string { return "dispatcher:" + d.node }

// agentState is the stored form of a breaker; version guards the write.
func agentState(profile string, st policy.BreakerState, version int64, now time.Time) *store.AgentState {
	data, _ := json.Marshal(st)
	state := st.State
	if state == "" {
		state = policy.BreakerClosed
	}
	return &store.AgentState{Name: profile, State: state, Kind: string(st.Kind), Reason: st.Reason, Until: st.Until, Data: data, UpdatedAt: now, Version: version}
}

func column(cfg *config.Config, role board.Role) string {
	c, _ := cfg.Board.First(role)
	return c.Name
}

func blockedColumn(cfg *config.Config) string {
	if c, ok := cfg.Board.First(board.RoleBlocked); ok {
		return c.Name
	}
	return cfg.Policy.FailedState
}

// completedColumn is where a successful run puts its card: the completed
// column (e.g. review) or, when the board has none, done.
func completedColumn(cfg *config.Config) string {
	if c, ok := cfg.Board.First(board.RoleCompleted); ok {
		return c.Name
	}
	return column(cfg, board.RoleDone)
}

func reasonText(r *board.BlockReason) string {
	return fmt.Sprintf("Blocked (%s)\n\nWhat: %s\nWhere: %s\nHow to continue: %s", r.Kind, r.What, r.Where, r.How)
}

func questionOf(cs []board.Comment) string {
	for _, c := range cs {
		if strings.HasPrefix(c.Body, "Question: ") {
			return strings.TrimPrefix(c.Body, "Question: ")
		}
	}
	return ""
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
