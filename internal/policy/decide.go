package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

// Input is everything Decide needs to route one finished run. It is plain data:
// the dispatcher reads it from the store and passes the clock and randomness in.
type Input struct {
	Config Config
	Card   board.Card
	// CardRole is the role of the column the card is in now. When it is a sink
	// (an operator blocked, cancelled or finished the card mid-run) the decision
	// is hold: automation never moves a card out of a sink.
	CardRole       board.Role
	Classification Classification
	// History is every run of the card's current retry epoch, ordered by
	// attempt, the finished run last (its Outcome, Kind and Counted not yet set).
	// Earlier runs are read by their stored Kind, Counted and Outcome.
	History []board.Run
	Now     time.Time
	Rand    func() float64 // [0,1) for jitter; nil means no jitter
	// Column names. FailedState is where a give-up goes (default: Config's);
	// BlockedState where a block goes (default: FailedState).
	FailedState, BlockedState, EligibleState, ParkedState, CompletedState string
	// CardStillEligibleAfterSuccess: the agent exited cleanly yet the card is
	// still in an eligible column (it did not move it), so the work continues.
	CardStillEligibleAfterSuccess bool
	LogPath, Workspace            string // for "where"; default: the run's own
	AgentProfile                  string
	// ProfileBreakerTripped: the agent profile's circuit breaker is open (or
	// probing) for provider_unavailable as the run is routed, so the provider
	// is failing for other cards too. A provider_unavailable give-up then
	// blames the outage, not the card.
	ProfileBreakerTripped bool
	// Report is the agent's own report on the run (board.Run.Report); an
	// agent_blocked block reason is its what, where and how, verbatim.
	Report *board.AgentReport
	// Hold, when set, says the run's failure is its profile's (HoldFor):
	// the run is not counted and the card waits on the profile.
	Hold *Hold
	// Changes are the times a human acted on the card in this retry epoch
	// (edits, comments, answers, moves), and NextBasis what the next
	// attempt would run on (board.Run.Basis), for the repeat cap.
	Changes   []time.Time
	NextBasis map[string]string
}

// ProfilePause asks the dispatcher to pause the card's agent profile.
type ProfilePause struct {
	Kind   Kind
	Reason string
	Until  *time.Time // nil: until an operator runs drover agent resume
}

// Decision is what happens after a run (or a release). The dispatcher writes it
// in one transaction: the run's Outcome, Kind and Counted, the card's NextState,
// NextAttemptAt, BlockReason and GaveUp, an Event with Explain, and one outbox
// row per Notify entry.
type Decision struct {
	Verb          Verb
	Outcome       board.Outcome // for the run
	Counted       bool          // the run spends policy.max_attempts
	Kind          Kind
	NextState     string // the column the card goes to (or stays in)
	NextAttemptAt *time.Time
	BlockReason   *board.BlockReason // set for block and give_up
	GaveUp        *board.GaveUp      // set for give_up
	PauseProfile  *ProfilePause
	Notify        []string // NotifyBlocked, NotifyGaveUp (alone), NotifyParked, NotifyProfilePaused
	Event         string   // board.Ev* type for the event log
	Explain       string   // one line for the event log
}

// CountedAttempts is the number of runs in history that spent max_attempts.
func CountedAttempts(history []board.Run) int {
	n := 0
	for _, r := range history {
		if r.Counted {
			n++
		}
	}
	return n
}

func countKind(history []board.Run, k Kind) int {
	n := 0
	for _, r := range history {
		if Kind(r.Kind) == k {
			n++
		}
	}
	return n
}

// trailing counts runs at the end of history with outcome o, skipping runs
// with any outcome in skip.
func trailing(history []board.Run, o board.Outcome, skip ...board.Outcome) int {
	n := 0
outer:
	for i := len(history) - 1; i >= 0; i-- {
		for _, s := range skip {
			if history[i].Outcome == s {
				continue outer
			}
		}
		if history[i].Outcome != o {
			break
		}
		n++
	}
	return n
}

// maxAttempts is the effective bound: negative is unbounded (returned as 0);
// 0 (refused by Validate) behaves as 1, the safe side.
func (c Config) maxAttempts() int {
	switch {
	case c.MaxAttempts < 0:
		return 0
	case c.MaxAttempts == 0:
		return 1
	}
	return c.MaxAttempts
}

type decider struct {
	in    Input
	k     Kind
	msg   string
	cur   board.Run
	prior []board.Run
	id    string
}

// Decide routes a finished run to a truthful state. It is pure. The rules:
//
//   - a card in a sink (blocked, done, cancelled) is held there, whatever the run did;
//   - counted kinds (agent_failed, max_turns, timeout, stalled, unknown, and any
//     unrecognised kind) spend max_attempts: the run that makes the counted
//     total reach max_attempts gives up to failed_state; before that, retry
//     after Delay(n) where n is the counted total;
//   - uncounted kinds with a cap (network, workspace_setup, interrupted,
//     provider_unavailable, rate_limited) may be retried or deferred cap times
//     in an epoch; the next run of that kind gives up to failed_state;
//   - usage_limited defers and pauses the profile until the reset; auth_failed,
//     quota_exhausted, config_error defer and pause the profile until an operator;
//   - invalid_input, context_exhausted, permission_denied, refused block at once;
//     input_required parks; cancelled holds (or blocks if the card was left in
//     the running column); succeeded completes, or continues while the card
//     stays eligible until the continuation_cap-th clean exit in a row blocks
//     with no_progress;
//   - every retry or deferral waits at least until the provider's RetryAt or
//     RetryAfter.
func Decide(in Input) Decision {
	x := decider{in: in, k: in.Classification.Kind, msg: in.Classification.Message, id: ident(in.Card)}
	if n := len(in.History); n > 0 {
		x.cur, x.prior = in.History[n-1], in.History[:n-1]
	}
	if x.k == KindNone {
		x.k, x.msg = KindUnknown, nonEmpty(x.msg, x.cur.Error, "the run was not classified")
	} else if !known(x.k) {
		x.k, x.msg = KindUnknown, fmt.Sprintf("unrecognised kind %q: %s", x.k, x.msg)
	}
	s := Spec(x.k)
	d := Decision{Kind: x.k, Outcome: s.Outcome, Counted: s.Counts}

	if in.CardRole.IsSink() {
		return x.hold(d, fmt.Sprintf("%s ended (%s) but %s is in %s, a sink an operator moved it to; it stays there", x.run(), x.k, x.id, in.Card.State))
	}
	switch {
	case x.k == KindSucceeded:
		return x.success(d)
	case x.k == KindCancelled:
		if in.CardRole != board.RoleRunning && in.CardRole != "" && in.Card.State != "" {
			return x.hold(d, fmt.Sprintf("%s cancelled by an operator; %s stays in %s and is not retried", x.run(), x.id, in.Card.State))
		}
		return x.block(d, KindCancelled, "an operator cancelled the run", fmt.Sprintf("%s cancelled by an operator", x.run()))
	case x.k == KindInputRequired:
		return x.park(d)
	case s.Verb == VerbBlock:
		return x.block(d, x.k, x.msg, fmt.Sprintf("%s blocked (%s): %s", x.run(), x.k, short(x.msg)))
	case s.Profile == ProfileUntilOperator:
		return x.pauseProfile(d)
	case s.Counts && in.Hold != nil:
		return x.held(d)
	case s.Counts && in.Config.RepeatOn() && !x.lastAttempt() && !x.kindCapSpent():
		if n := Repeats(in.History, in.Changes, in.NextBasis); n >= in.Config.RepeatCap {
			d.Outcome = board.OutcomeBlocked
			return x.repeatBlock(d, n)
		}
		return x.counted(d)
	case s.Counts:
		return x.counted(d)
	}
	return x.capped(d)
}

// held defers a card whose failure is its profile's: not counted, waiting
// until the hold's probe time (the breaker decides when it runs again).
func (x *decider) held(d Decision) Decision {
	h := x.in.Hold
	prof := nonEmpty(h.Profile, x.in.AgentProfile, "PROFILE")
	d.Verb, d.Outcome, d.Counted, d.Event = VerbDefer, board.OutcomeDeferred, false, board.EvDeferred
	at := x.schedule(&d, h.CardUntil.Sub(x.in.Now))
	switch {
	case h.Probe:
		d.Explain = fmt.Sprintf("%s, the probe of held agent profile %s, failed the same way (%s: %s); not counted; %s stays held and the next probe runs at %s",
			x.run(), prof, x.k, short(x.msg), prof, clock(at, x.in.Now))
	case h.New:
		d.Explain = fmt.Sprintf("%s failed (%s: %s) the same way on %d cards (%s): the profile's problem, not the card's; not counted; agent profile %s is held until %s, then one probe card runs",
			x.run(), x.k, short(x.msg), len(h.Cards), strings.Join(h.Cards, ", "), prof, clock(at, x.in.Now))
	default:
		d.Explain = fmt.Sprintf("%s failed (%s: %s) the way agent profile %s is held for; not counted; %s waits for the profile's probe at %s",
			x.run(), x.k, short(x.msg), prof, x.id, clock(at, x.in.Now))
	}
	return d
}

func (x *decider) run() string {
	if x.cur.Attempt > 0 {
		return fmt.Sprintf("attempt %d", x.cur.Attempt)
	}
	return "the run"
}

func (x *decider) failedState() string {
	return nonEmpty(x.in.FailedState, x.in.Config.FailedState, "blocked")
}

func (x *decider) blockedState() string { return nonEmpty(x.in.BlockedState, x.failedState()) }

func (x *decider) eligibleState() string { return nonEmpty(x.in.EligibleState, "ready") }

func (x *decider) reason(k Kind, msg string) *board.BlockReason {
	r := &board.BlockReason{
		Kind:  string(k),
		What:  what(k, msg),
		Where: where(x.in.Card, x.cur, x.in.LogPath, x.in.Workspace),
		How:   how(k, x.id, x.in.AgentProfile, x.cur.ID),
	}
	if rep := x.in.Report; k == KindAgentBlocked && rep != nil && rep.Kind == board.ReportBlock {
		// The agent's own words, as it gave them (drover mcp bounded and
		// sanitised them); drover's where and how fill only a blank.
		r.What = nonEmpty(rep.What, r.What)
		r.Where = nonEmpty(rep.Where, r.Where)
		r.How = nonEmpty(rep.How, r.How)
	}
	if own := x.in.Classification.Reason; own != nil && k == x.in.Classification.Kind {
		r.What = nonEmpty(own.What, r.What)
		r.Where = nonEmpty(own.Where, r.Where)
		r.How = nonEmpty(own.How, r.How)
	}
	if k == KindProviderUnavailable && x.in.ProfileBreakerTripped {
		r.How = outageHow(x.id, x.in.AgentProfile)
	}
	return r
}

func (x *decider) hold(d Decision, explain string) Decision {
	d.Verb, d.NextState, d.Event, d.Explain = VerbHold, nonEmpty(x.in.Card.State, x.blockedState()), board.EvFinished, explain
	return d
}

func (x *decider) block(d Decision, k Kind, msg, explain string) Decision {
	d.Verb, d.NextState, d.Event = VerbBlock, x.blockedState(), board.EvBlocked
	d.BlockReason = x.reason(k, msg)
	d.Notify = []string{NotifyBlocked}
	d.Explain = fmt.Sprintf("%s; moved to %s until %s", explain, d.NextState, Spec(k).WhatCanChange)
	return d
}

// giveUp moves the card to failed_state with the stamp; used counts the budget
// that ran out.
func (x *decider) giveUp(d Decision, used int, budget, explain string) Decision {
	d.Verb, d.NextState, d.Event = VerbGiveUp, x.failedState(), board.EvGaveUp
	if d.Outcome == board.OutcomeDeferred {
		d.Outcome = board.OutcomeFailed
	}
	d.BlockReason = x.reason(x.k, x.msg)
	d.BlockReason.What += fmt.Sprintf("; gave up: %s, %s ran out", explain, budget)
	d.GaveUp = &board.GaveUp{RunID: x.cur.ID, Attempts: used, Kind: string(x.k),
		Reason: fmt.Sprintf("%s ran out: %s", budget, short(what(x.k, x.msg))), At: x.in.Now}
	d.Notify = []string{NotifyGaveUp}
	d.Explain = fmt.Sprintf("%s; gave up: %s ran out, moved to %s", explain, budget, d.NextState)
	return d
}

// schedule sets the next attempt: the kind's delay, never before a time the
// provider named.
func (x *decider) schedule(d *Decision, delay time.Duration) time.Time {
	at := x.in.Now.Add(delay)
	c := x.in.Classification
	if !c.RetryAt.IsZero() && c.RetryAt.After(at) {
		at = c.RetryAt
	}
	if c.RetryAfter > 0 && x.in.Now.Add(c.RetryAfter).After(at) {
		at = x.in.Now.Add(c.RetryAfter)
	}
	d.NextState, d.NextAttemptAt = x.eligibleState(), &at
	return at
}

// lastAttempt: this counted run spends the last of max_attempts (it gives
// up whatever else holds; the repeat cap blocks only a run that would be
// retried).
func (x *decider) lastAttempt() bool {
	limit := x.in.Config.maxAttempts()
	return limit > 0 && CountedAttempts(x.prior)+1 >= limit
}

// kindCapSpent: a counted kind with a cap of its own (no_changes) has used
// it up in this retry epoch; the run gives up by that cap.
func (x *decider) kindCapSpent() bool {
	kc := x.in.Config.Cap(x.k)
	return Spec(x.k).Counts && kc != NoCap && countKind(x.prior, x.k)+1 > kc
}

func (x *decider) counted(d Decision) Decision {
	n := CountedAttempts(x.prior) + 1
	limit := x.in.Config.maxAttempts()
	of := ""
	if limit > 0 {
		of = fmt.Sprintf(" of %d", limit)
	}
	head := fmt.Sprintf("attempt %d%s failed (%s)", n, of, x.k)
	if x.cur.Attempt > 0 && x.cur.Attempt != n {
		head = fmt.Sprintf("counted attempt %d%s failed (%s, run attempt %d)", n, of, x.k, x.cur.Attempt)
	}
	if limit > 0 && n >= limit {
		return x.giveUp(d, n, "policy.max_attempts", head)
	}
	// A counted kind with a cap of its own (no_changes) also gives up when
	// its own retries in this epoch are spent.
	if x.kindCapSpent() {
		kc, m := x.in.Config.Cap(x.k), countKind(x.prior, x.k)+1
		budget := fmt.Sprintf("policy.kinds.%s.cap", x.k)
		return x.giveUp(d, n, budget, fmt.Sprintf("%s; %s for the %s time in this retry epoch (%s: %d %s)", head, x.k, ordinal(m), budget, kc, plural("retry", kc)))
	}
	at := x.schedule(&d, Delay(x.in.Config, x.k, n, x.in.Rand))
	d.Verb, d.Event = VerbRetry, board.EvRetry
	d.Explain = fmt.Sprintf("%s; retry at %s", head, clock(at, x.in.Now))
	return d
}

// capped handles the uncounted kinds that retry or defer under a cap of their own.
func (x *decider) capped(d Decision) Decision {
	s := Spec(x.k)
	m := countKind(x.prior, x.k) + 1
	if x.k == KindInterrupted {
		// The crash-loop guard counts interruptions in a row: a run that
		// ended any other way in between shows the process is not looping
		// (graceful restarts during deploys do not add up to a block).
		m = trailing(x.prior, board.OutcomeInterrupted) + 1
	}
	limit := x.in.Config.Cap(x.k)
	noun := "retry"
	if s.Verb == VerbDefer {
		noun = "deferral"
	}
	head := fmt.Sprintf("%s hit %s (%s %d", x.run(), x.k, noun, m)
	if limit != NoCap {
		head += fmt.Sprintf(" of %d", limit)
	}
	head += ", not counted toward max_attempts)"
	if limit != NoCap && m > limit {
		budget := fmt.Sprintf("policy.kinds.%s.cap", x.k)
		span := "in this retry epoch"
		if x.k == KindInterrupted {
			span = "in a row"
			if x.cur.Attempt >= m {
				span += fmt.Sprintf(" (attempts %d–%d)", x.cur.Attempt-m+1, x.cur.Attempt)
			}
		}
		head = fmt.Sprintf("%s hit %s for the %s time %s (%s: %d %s)", x.run(), x.k, ordinal(m), span, budget, limit, plural(noun, limit))
		if x.k == KindProviderUnavailable {
			head += providerScope(x.in.ProfileBreakerTripped, x.in.AgentProfile)
		}
		return x.giveUp(d, m, budget, head)
	}
	at := x.schedule(&d, Delay(x.in.Config, x.k, m, x.in.Rand))
	d.Verb = s.Verb
	if s.Verb == VerbDefer {
		d.Event = board.EvDeferred
		d.Explain = fmt.Sprintf("%s; deferred until %s", head, clock(at, x.in.Now))
	} else {
		d.Event = board.EvRetry
		d.Explain = fmt.Sprintf("%s; retry at %s", head, clock(at, x.in.Now))
	}
	if s.Profile == ProfileUntilReset {
		d.PauseProfile = &ProfilePause{Kind: x.k, Reason: what(x.k, x.msg), Until: &at}
		d.Explain += fmt.Sprintf("; agent profile %s paused until then", nonEmpty(x.in.AgentProfile, "PROFILE"))
	}
	return d
}

func (x *decider) pauseProfile(d Decision) Decision {
	prof := nonEmpty(x.in.AgentProfile, "PROFILE")
	d.Verb, d.Event, d.NextState = VerbDefer, board.EvDeferred, x.eligibleState()
	d.PauseProfile = &ProfilePause{Kind: x.k, Reason: what(x.k, x.msg) + "; " + profileHow(x.k, x.in.AgentProfile, x.msg)}
	d.Notify = []string{NotifyProfilePaused}
	if ProbesCredit(x.in.Config, x.k) {
		// Held with probes (the breaker's Observe opens it): no pause until
		// an operator, so PauseProfile carries the first probe's time. The
		// card has no time of its own: it waits on the profile (or runs on
		// a fallback link at once).
		at := x.in.Now.Add(x.in.Config.QuotaProbe)
		d.PauseProfile.Until = &at
		d.Explain = fmt.Sprintf("%s hit %s (%s, not counted); agent profile %s is held: one probe card runs after %s, then at doubling waits up to %s, and the profile goes on by itself once credit is added (drover agent resume %s goes at once); %s waits in %s",
			x.run(), x.k, short(x.msg), prof, FormatDuration(x.in.Config.QuotaProbe), FormatDuration(MaxQuotaProbe), prof, x.id, d.NextState)
		return d
	}
	d.Explain = fmt.Sprintf("%s hit %s (%s, not counted); agent profile %s paused until an operator runs drover agent resume %s; %s waits in %s",
		x.run(), x.k, short(x.msg), prof, prof, x.id, d.NextState)
	return d
}

func (x *decider) park(d Decision) Decision {
	if x.in.ParkedState == "" {
		d.Outcome = board.OutcomeBlocked
		return x.block(d, KindInputRequired, x.msg+" (this board has no parked column: answer by editing the card)",
			fmt.Sprintf("%s asked for input", x.run()))
	}
	d.Verb, d.NextState, d.Event = VerbPark, x.in.ParkedState, board.EvParked
	d.Notify = []string{NotifyParked}
	d.Explain = fmt.Sprintf("%s asked for input (%s); parked in %s until someone runs drover card answer %s TEXT",
		x.run(), short(nonEmpty(x.msg, "no question text")), d.NextState, x.id)
	return d
}

func (x *decider) success(d Decision) Decision {
	if !x.in.CardStillEligibleAfterSuccess {
		d.Verb, d.Event = VerbComplete, board.EvFinished
		d.NextState = nonEmpty(x.in.CompletedState, x.in.Card.State, x.eligibleState())
		if x.in.CardRole == board.RoleCompleted || x.in.CardRole == board.RoleDone {
			d.NextState = x.in.Card.State
		}
		d.Explain = fmt.Sprintf("%s succeeded; %s moves to %s", x.run(), x.id, d.NextState)
		return d
	}
	limit := max(x.in.Config.ContinuationCap, 1)
	c := trailing(x.prior, board.OutcomeSucceeded, board.OutcomeReleased) + 1
	head := fmt.Sprintf("%s exited cleanly but %s is still in %s (clean exit %d of %d)", x.run(), x.id, nonEmpty(x.in.Card.State, x.eligibleState()), c, limit)
	if c >= limit {
		d.Kind = KindNoProgress
		msg := fmt.Sprintf("%d clean exits in a row while the card stayed eligible (policy.continuation_cap %d)", c, limit)
		return x.block(d, KindNoProgress, msg, head)
	}
	x.schedule(&d, 0)
	d.Verb, d.Event = VerbRetry, board.EvRetry
	d.Explain = head + "; continue now"
	return d
}

func ordinal(n int) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	return fmt.Sprintf("%d%s", n, suf)
}

func plural(noun string, n int) string {
	if n == 1 {
		return noun
	}
	if noun == "retry" {
		return "retries"
	}
	return noun + "s"
}
