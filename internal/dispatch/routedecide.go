package dispatch

import (
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// routeEnv is what a routing decision takes besides the request and the
// store's facts.
type routeEnv struct {
	cfg  *config.Config
	now  time.Time
	rand func() float64 // jitter; nil: none
	node string         // who routes (the events' actor)
}

// routing is one run's routing, decided: the change to write, the
// notifications to queue with it (Options.Outbox turns them into the
// change's outbox rows), and what its effects need once it is written.
type routing struct {
	ch      store.Change
	notices []Notice
	// lost: the claim is gone and the change records only the run; its
	// conflict means someone else routed the run.
	lost bool
	cfg  *config.Config
	// sent: the change went to the store (a failure after it may have
	// committed it).
	sent bool
	run  board.Run  // the run as written
	next board.Card // the card as written (as read, when lost)
	verb policy.Verb
	// path names the way the decision went (routePath), for the
	// simulation's check that it reaches every one.
	path string
}

// decideRoute is the routing of req given what the store holds (f): pure,
// so every path can be tested without a store. errRouted: the claim passed
// on and the run was routed by whoever took it (or by this routing's own
// earlier write, whose reply was lost); errRenewed: a recovery whose owner
// renewed its lease.
func decideRoute(env routeEnv, req routeReq, f routeFacts) (routing, error) {
	cls, fp := failureOf(req, f.stored)
	fin := finishedRun(env, f.stored, req.res)
	fin.Fingerprint, fin.Verify, fin.Changes = fp, req.verify, req.changes
	if c := f.card.Claim; c == nil || c.Owner != req.claim.Owner || c.Epoch != req.claim.Epoch {
		// The claim passed on. Whoever took it (a recovery) routes the run
		// in the same change; if the run is somehow still open, it is
		// recorded here, and the card is left to its new owner.
		if !f.stored.Open() {
			return routing{lost: true, path: PathLost, cfg: env.cfg, run: f.stored, next: f.card}, errRouted
		}
		return lostRoute(env, req, f, fin, cls), nil
	}
	// (A run with an outcome under this routing's own claim cannot be: an
	// outcome is written only with the claim's release. The store's
	// "run has no outcome yet" guard refuses it all the same.)
	// Recovering another node's claim: only while its lease is still over.
	var leaseEndedBy *time.Time
	if req.recovering && req.claim.Owner != env.node {
		if f.card.Claim.LeaseUntil.After(env.now) {
			return routing{}, errRenewed
		}
		leaseEndedBy = &env.now
	}
	history := currentLast(f.history, fin)
	card := policy.CardRef{ID: f.card.ID, Identifier: f.card.Identifier}
	hold := policy.HoldFor(env.cfg.Policy, f.breakers[fin.Agent].BreakerState, fp, cls.Kind, card, fin.Agent, f.peers, env.now)
	dec := decide(env, req, f, cls, fin, history, hold)
	fin.Outcome, fin.Kind, fin.Counted, fin.Decision = dec.Outcome, string(dec.Kind), dec.Counted, dec.Explain
	if fin.Error == "" && cls.Kind != policy.KindSucceeded {
		fin.Error = excerpt.Clip(cls.Message, 2000)
	}
	next := nextCard(env.cfg, f.card, dec)
	r := routing{cfg: env.cfg, run: fin, next: next, verb: dec.Verb, path: routePath(req, dec, hold),
		ch: store.Change{Card: &next, ClaimGuard: &req.claim, LeaseEndedBy: leaseEndedBy, Run: &fin, RunMustBeOpen: true,
			// Decided without a report: one that lands before the write
			// refuses it, and routing decides again with it (a report once
			// stored never changes, so one read is all there is to guard).
			RunUnreported: f.stored.Report == nil}}
	r.ch.Events = []board.Event{finishedEvent(env, fin, next, cls, dec, req.res)}
	r.ch.Comments = routeComments(env, next, fin, dec, r.ch.Events[0])
	r.notices = routeNotices(env, next, &fin, dec, r.ch.Comments)
	if row, ok := pullRow(env.cfg, next, fin, dec); ok {
		r.ch.Outbox = append(r.ch.Outbox, row)
	}
	if hold != nil && hold.New {
		r.ch.Uncount = &store.Uncount{Agent: fin.Agent, Fingerprint: fp, Since: hold.Since}
	}
	bc := breakerChange(env, f.breakers, fin, card, cls, dec, hold)
	r.ch.AgentState, r.ch.Events, r.notices = bc.state, append(r.ch.Events, bc.events...), append(r.notices, bc.notices...)
	if bc.state == nil && env.cfg.Policy.CorrelationOn() && policy.Informative(fp) && policy.Spec(cls.Kind).Counts {
		// Decided on the breaker as read: if another node holds the profile
		// meanwhile, this routing is refused and decided again.
		r.ch.AgentGuard = &store.AgentGuard{Name: fin.Agent, Version: f.breakers[fin.Agent].version}
	}
	return r, nil
}

// finishedRun is the stored run with its end: the time, and the agent's
// figures when there is a result.
func finishedRun(env routeEnv, stored board.Run, res *agent.Result) board.Run {
	fin := stored
	now := env.now
	fin.FinishedAt = &now
	if res != nil {
		p, _ := env.cfg.Agents.Profile(stored.Agent)
		fillRun(&fin, res, p)
	}
	return fin
}

// lostRoute records a run whose claim is gone: a stale owner writes
// nothing to the card.
func lostRoute(env routeEnv, req routeReq, f routeFacts, fin board.Run, cls policy.Classification) routing {
	fin.Outcome, fin.Kind, fin.Decision = board.OutcomeLeaseLost, string(cls.Kind), "claim lost; the card belongs to its new owner"
	ev := board.Event{At: env.now, CardID: req.cardID, RunID: req.run.ID, Type: board.EvLeaseLost, Actor: actorOf(env.node),
		Reason: "run stopped: the claim passed to another owner"}
	return routing{lost: true, cfg: env.cfg, run: fin, next: f.card, path: PathLost,
		ch: store.Change{Run: &fin, RunMustBeOpen: true, Events: []board.Event{ev}}}
}

// decide is the policy's decision on the run: the spend block when drover
// stopped it for the card's spend cap, else policy.Decide.
func decide(env routeEnv, req routeReq, f routeFacts, cls policy.Classification, fin board.Run, history []board.Run, hold *policy.Hold) policy.Decision {
	cfg := env.cfg
	if req.res != nil && req.res.Signals.KilledFor == "spend" && !cfg.Board.RoleOf(f.card.State).IsSink() {
		// What the epoch really cost: the stored runs' figures can lag (live
		// progress is written at most once a second), the finishing run's
		// own figure is the one it ends with.
		spent := fin.CostUSD
		for _, r := range history {
			if r.ID != fin.ID {
				spent += r.CostUSD
			}
		}
		return policy.SpendBlock(f.card, policy.SpendLimits{PerDay: cfg.Limits.MaxCostPerDayUSD, PerCard: cfg.Limits.MaxCostPerCardUSD}, spent, fin.ID, blockedColumn(cfg))
	}
	return policy.Decide(policy.Input{Config: cfg.Policy, Card: f.card, CardRole: cfg.Board.RoleOf(f.card.State), Classification: cls,
		History: history, Now: env.now, Rand: env.rand, FailedState: cfg.Policy.FailedState, BlockedState: blockedColumn(cfg),
		EligibleState: column(cfg, board.RoleEligible), ParkedState: column(cfg, board.RoleParked),
		CompletedState: completedColumn(cfg), LogPath: fin.LogPath, Workspace: fin.Workspace, AgentProfile: fin.Agent,
		ProfileBreakerTripped: outage(f.breakers, fin.Agent), Report: f.stored.Report, Hold: hold, Changes: f.changes,
		NextBasis: basisOf(cfg, f.card, fin.Agent)})
}

// nextCard is the card as the decision leaves it: unclaimed, in its next
// column with its schedule, reason, block reason and give-up stamp.
func nextCard(cfg *config.Config, card board.Card, dec policy.Decision) board.Card {
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
	if role := cfg.Board.RoleOf(next.State); role == board.RoleCompleted || role == board.RoleDone {
		next.BlockReason = nil
	}
	return next
}

// finishedEvent is the routing's event: what the run came to and where
// the card goes. A park keeps the whole question for the next attempt's
// prompt (see conversation).
func finishedEvent(env routeEnv, fin board.Run, next board.Card, cls policy.Classification, dec policy.Decision, res *agent.Result) board.Event {
	typ := dec.Event
	if typ == "" {
		typ = board.EvFinished
	}
	data := map[string]any{"attempt": fin.Attempt, "kind": fin.Kind, "verb": dec.Verb, "counted": fin.Counted,
		"next_attempt_at": dec.NextAttemptAt, "source": cls.Source, "to": next.State, "agent": fin.Agent}
	if fin.Fingerprint != "" {
		data["fingerprint"] = fin.Fingerprint
	}
	if dec.Verb == policy.VerbPark {
		data["question"] = question(cls, res)
	}
	if len(fin.Argv) > 0 {
		data["argv"] = fin.Argv // what ran, secrets redacted, in the audit log too
	}
	return board.Event{At: env.now, CardID: next.ID, RunID: fin.ID, Type: typ, Actor: actorOf(env.node), Reason: dec.Explain, Data: jsonOf(data)}
}

// routeComments are the comments a routing adds: the block reason, and a
// park's question in the agent's name.
func routeComments(env routeEnv, next board.Card, fin board.Run, dec policy.Decision, ev board.Event) []board.Comment {
	var out []board.Comment
	if r := dec.BlockReason; r != nil {
		out = append(out, board.Comment{CardID: next.ID, Author: actorOf(env.node), Body: reasonText(r), At: env.now})
	}
	if dec.Verb == policy.VerbPark {
		out = append(out, board.Comment{CardID: next.ID, Author: "agent:" + fin.Agent, Body: "Question: " + eventField(ev.Data, "question"), At: env.now})
	}
	return out
}

// routeNotices are the decision's notifications, one per (card, run,
// event). A profile's pause is notified by breakerChange, once per
// transition of the profile, not once per card.
func routeNotices(env routeEnv, next board.Card, fin *board.Run, dec policy.Decision, comments []board.Comment) []Notice {
	var out []Notice
	for _, ev := range dec.Notify {
		if ev == policy.NotifyProfilePaused {
			continue
		}
		out = append(out, Notice{Event: ev, Key: next.ID + "/" + fin.ID + "/" + ev, Card: next, Run: fin,
			Reason: next.BlockReason, GaveUp: dec.GaveUp, Profile: fin.Agent, Question: questionOf(comments), At: env.now})
	}
	return out
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

// Routing paths (routing.path, Options.OnRoute): every way a finished run
// can go. The simulation checks that its seeds reach each of them.
const (
	PathLost        = "lost"         // the claim is no longer this routing's: nothing is written if the run was routed, else only the run
	PathRenewed     = "renewed"      // a recovery whose owner renewed its lease: nothing is written
	PathSpendBlock  = "spend_block"  // drover stopped the run for the card's spend cap
	PathHoldOpened  = "hold_opened"  // the same failure on several cards: the profile is held
	PathHoldProbe   = "hold_probe"   // the held profile's probe failed alike
	PathHeld        = "held"         // a failure the profile is held for: not counted
	PathRepeatBlock = "repeat_block" // the same failure again with nothing changed
	PathDecided     = "decided:"     // + the policy's verb: retry, defer, block, give_up, park, complete, hold
)

// RoutePaths lists every path a routing can take.
func RoutePaths() []string {
	out := []string{PathLost, PathRenewed, PathSpendBlock, PathHoldOpened, PathHoldProbe, PathHeld, PathRepeatBlock}
	for _, v := range []policy.Verb{policy.VerbRetry, policy.VerbDefer, policy.VerbBlock, policy.VerbGiveUp, policy.VerbPark, policy.VerbComplete, policy.VerbHold} {
		out = append(out, PathDecided+string(v))
	}
	return out
}

// routePath is the path of a decided routing.
func routePath(req routeReq, dec policy.Decision, hold *policy.Hold) string {
	held := hold != nil && dec.Verb == policy.VerbDefer && !dec.Counted
	switch {
	case req.res != nil && req.res.Signals.KilledFor == "spend" && dec.Kind == policy.KindSpendLimit && dec.Verb == policy.VerbBlock:
		return PathSpendBlock
	case held && hold.New:
		return PathHoldOpened
	case held && hold.Probe:
		return PathHoldProbe
	case held:
		return PathHeld
	case dec.BlockReason != nil && dec.BlockReason.Kind == string(policy.KindRepeatedFailure):
		return PathRepeatBlock
	}
	return PathDecided + string(dec.Verb)
}
