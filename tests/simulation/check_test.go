package simulation

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// checker reads the store (without faults) after every step and holds it to
// the invariants of docs/design.md, Invariants. It keeps what it has seen of
// the event log so each step reads only the new events.
type checker struct {
	w         *World
	lastSeq   int64
	prev      map[string]string // card id → state after the previous step
	routed    map[string]int    // run id → routing events
	attempt   map[string]any    // run id → attempt number (from its claim event)
	cards     []board.Card      // as read after the last step that changed something
	valBlocks map[string]int    // card id → invalid-input blocks since the last operator resume/reopen
	followed  int               // events read by following the log by seq
	held      map[string]string // agent profile → the fingerprint it is held for
}

func (c *checker) init(w *World) {
	c.w = w
	c.prev = map[string]string{}
	c.routed = map[string]int{}
	c.attempt = map[string]any{}
	c.valBlocks = map[string]int{}
	c.held = map[string]string{}
}

// not routing: the events a run gets before its outcome.
var preRouting = map[string]bool{board.EvClaimed: true, board.EvStarted: true}

// agentCallEvent reports an event written by a run's own agent (drover
// mcp's calls): not a routing, and only ever before its run's routing.
func agentCallEvent(e board.Event) bool {
	return strings.HasPrefix(e.Actor, "agent:") && (e.Type == board.EvAgentReport || e.Type == board.EvAgentProgress || e.Type == board.EvCommented)
}

func (c *checker) check(final bool) {
	w := c.w
	ctx := context.Background()
	b := w.cfg.Board
	evs, err := w.raw.ListEvents(ctx, store.EventFilter{SinceSeq: c.lastSeq})
	if err != nil {
		w.violate("checker: %v", err)
		return
	}
	// Live costs change without an event: the day's spend is read every step.
	c.checkDaySpend(false, nil)
	// Every write that changes a card or closes a run appends an event, so a
	// step without new events changed nothing the checks below look at.
	if len(evs) == 0 && !final && c.cards != nil {
		return
	}
	cards, err := w.raw.ListCards(ctx, store.CardFilter{})
	if err != nil {
		w.violate("checker: %v", err)
		return
	}
	sortBoardOrder(cards)
	c.cards = cards
	// Attempt numbers and the counted flag never change once written, so
	// the full run table is read at the end; every step reads the open runs.
	rf := store.RunFilter{Open: store.Bool(true)}
	if final {
		rf = store.RunFilter{}
	}
	runs, err := w.raw.ListRuns(ctx, rf)
	if err != nil {
		w.violate("checker: %v", err)
		return
	}
	ident := map[string]string{}
	for _, cd := range cards {
		ident[cd.ID] = cd.Identifier
	}

	// The event log: who moved what, and how often each run was routed.
	reentered := map[string]bool{}
	for _, e := range evs {
		if e.Seq <= c.lastSeq {
			w.violate("event %d (%s) read after event %d: following by seq must see each event once, in order", e.Seq, e.Type, c.lastSeq)
		}
		c.followed++
		c.lastSeq = e.Seq
		if e.CardID != "" {
			w.steplog = append(w.steplog, fmt.Sprintf("       · %s %s by %s", ident[e.CardID], e.Type, e.Actor))
		} else {
			w.steplog = append(w.steplog, fmt.Sprintf("       · %s by %s", e.Type, e.Actor))
		}
		var data map[string]any
		_ = json.Unmarshal(e.Data, &data)
		switch {
		case e.Type == board.EvClaimed:
			c.attempt[e.RunID] = data["attempt"]
			from, _ := data["from"].(string)
			if r := b.RoleOf(from); r != board.RoleEligible {
				w.violate("%s claimed by %s from %s (role %s): automation claims only eligible cards", ident[e.CardID], e.Actor, from, r)
			}
		case e.RunID != "" && agentCallEvent(e):
			if c.routed[e.RunID] > 0 {
				w.violate("%s: the agent's %s call was taken after its run (attempt %v) was routed: a call from an ended run must change nothing", ident[e.CardID], e.Type, c.attempt[e.RunID])
			}
		case e.RunID != "" && !preRouting[e.Type]:
			c.routed[e.RunID]++
			if c.routed[e.RunID] > 1 {
				w.violate("a run of %s (attempt %v) routed %d times (event %s by %s)", ident[e.CardID], c.attempt[e.RunID], c.routed[e.RunID], e.Type, e.Actor)
			}
		}
		c.followHolds(e, data, ident)
		if e.Type == board.EvBlocked && strings.HasPrefix(e.Actor, "dispatcher:") && data["kind"] == string(policy.KindInvalidInput) {
			c.valBlocks[e.CardID]++
			if c.valBlocks[e.CardID] > 1 {
				w.violate("%s blocked for invalid input %d times without an operator resume between", ident[e.CardID], c.valBlocks[e.CardID])
			}
		}
		if strings.HasPrefix(e.Actor, "operator") {
			// An operator may take a card out of a sink (resume, reopen,
			// or cancel a blocked card).
			reentered[e.CardID] = true
			if e.Type == board.EvResumed || e.Type == board.EvReopened {
				c.valBlocks[e.CardID] = 0
			}
		}
	}

	// No card waits on itself through blocked_by: the store refuses the
	// edit that would close a cycle, whatever runs at the same time.
	cardByID := map[string]board.Card{}
	for _, cd := range cards {
		cardByID[cd.ID] = cd
	}
	get := func(id string) (board.Card, bool, error) { cd, ok := cardByID[id]; return cd, ok, nil }
	for _, cd := range cards {
		for _, b := range cd.BlockedBy {
			if path, _ := board.WaitPath(b, cd.ID, get); path != nil {
				w.violate("%s waits on itself: %s → %s", cd.Identifier, cd.Identifier, strings.Join(path, " → "))
			}
		}
	}

	// Sinks are left only by an operator's resume or reopen.
	for _, cd := range cards {
		prev, seen := c.prev[cd.ID]
		if seen && prev != cd.State && b.RoleOf(prev).IsSink() && !reentered[cd.ID] {
			w.violate("%s left sink %s for %s without an operator action in the event log", cd.Identifier, prev, cd.State)
		}
		c.prev[cd.ID] = cd.State
	}

	// Runs: attempts 1..n per (card, retry epoch), counted ≤ max_attempts,
	// at most one open run per card.
	type key struct {
		card  string
		epoch int
	}
	attempts := map[key][]int{}
	counted := map[key]int{}
	open := map[string][]board.Run{}
	runByID := map[string]board.Run{}
	for _, r := range runs {
		k := key{r.CardID, r.RetryEpoch}
		attempts[k] = append(attempts[k], r.Attempt)
		if r.Counted {
			counted[k]++
		}
		if r.Open() {
			open[r.CardID] = append(open[r.CardID], r)
		}
		runByID[r.ID] = r
	}
	if final {
		c.checkReports(runs, ident)
		c.checkRepeatBlocks(cards, runs)
	}
	for k, as := range attempts {
		if !final {
			break
		}
		sort.Ints(as)
		for i, a := range as {
			if a != i+1 {
				w.violate("%s retry epoch %d has attempts %v: want 1..%d without gaps or duplicates", ident[k.card], k.epoch, as, len(as))
				break
			}
		}
		if w.maxAttempts > 0 && counted[k] > w.maxAttempts {
			w.violate("%s retry epoch %d has %d counted attempts, max_attempts is %d", ident[k.card], k.epoch, counted[k], w.maxAttempts)
		}
	}
	for card, rs := range open {
		if len(rs) > 1 {
			w.violate("%s has %d open runs", ident[card], len(rs))
		}
	}
	if final {
		c.checkDaySpend(true, runs)
	}
	// A finished run has an outcome (issue 13, item 1: a spend stop left
	// finished_at set and outcome "").
	for _, r := range runs {
		if r.Open() && r.FinishedAt != nil {
			w.violate("run of %s (retry epoch %d, attempt %d) finished at %s with no outcome", ident[r.CardID], r.RetryEpoch, r.Attempt, r.FinishedAt)
		}
	}
	// A live run uses the spec of its retry epoch: while the card is still in
	// the run's epoch, its spec is the one the session started with (issue
	// 13, item 8: an edit under a running attempt kept the epoch).
	byCard := map[string]board.Card{}
	for _, cd := range cards {
		byCard[cd.ID] = cd
	}
	for _, id := range sortedKeys(w.live) {
		iv := w.live[id]
		cd, ok := byCard[iv.card.ID]
		if ok && cd.RetryEpoch == iv.run.RetryEpoch && string(cd.Spec) != string(iv.card.Spec) {
			w.violate("%s attempt %d runs spec %s but its retry epoch %d now has spec %s", cd.Identifier, iv.run.Attempt, iv.card.Spec, cd.RetryEpoch, cd.Spec)
		}
	}
	// A live agent session belongs to an open run.
	for _, id := range sortedKeys(w.live) {
		iv := w.live[id]
		if r, ok := runByID[iv.run.ID]; (!ok || !r.Open()) && !iv.proc.partitioned {
			w.violate("agent session of %s attempt %d is live but its run has outcome %q", iv.card.Identifier, iv.run.Attempt, r.Outcome)
		}
	}
	if !final {
		return
	}

	// Following the log by seq saw every event of the table exactly once.
	if all, err := w.raw.ListEvents(ctx, store.EventFilter{}); err != nil {
		w.violate("checker: %v", err)
	} else if len(all) != c.followed {
		w.violate("the event log holds %d events, following it by seq saw %d", len(all), c.followed)
	}

	// After settling: every run has exactly one outcome, routed once; no
	// claims; every card in a state that tells the truth.
	for _, r := range runs {
		if r.Open() {
			w.violate("run of %s (retry epoch %d, attempt %d) has no outcome after settling", ident[r.CardID], r.RetryEpoch, r.Attempt)
		} else if c.routed[r.ID] != 1 {
			w.violate("run of %s (retry epoch %d, attempt %d, %s) has %d routing events, want 1", ident[r.CardID], r.RetryEpoch, r.Attempt, r.Outcome, c.routed[r.ID])
		}
	}
	for _, iv := range w.invs {
		if !iv.ended {
			w.violate("agent session of %s attempt %d never ended", iv.card.Identifier, iv.run.Attempt)
		}
		if r, ok := runByID[iv.run.ID]; !ok || r.Open() {
			w.violate("agent session of %s attempt %d has no routed run", iv.card.Identifier, iv.run.Attempt)
		}
	}
	ob, err := w.raw.ListOutbox(ctx, store.OutboxFilter{})
	if err != nil {
		w.violate("checker: %v", err)
	}
	keys := map[string]bool{}
	for _, o := range ob {
		k := o.CardID + "/" + o.RunID + "/" + o.Event + "/" + o.Key
		if keys[o.Key] || keys[k] {
			w.violate("notification %s (%s, %s) queued twice", o.Key, ident[o.CardID], o.Event)
		}
		keys[o.Key], keys[k] = true, true
	}
	states, err := w.raw.ListAgentStates(ctx)
	if err != nil {
		w.violate("checker: %v", err)
	}
	allowed := map[string]bool{"sim": true, "planner": true}
	now := w.clk.Now()
	for _, a := range states {
		var bs policy.BreakerState
		if len(a.Data) > 0 {
			_ = json.Unmarshal(a.Data, &bs)
		}
		if a.State == policy.BreakerClosed {
			bs = policy.BreakerState{State: policy.BreakerClosed}
		}
		ok, _, _ := policy.Allow(bs, now)
		allowed[a.Name] = ok
	}
	byID := map[string]board.Card{}
	for _, cd := range cards {
		byID[cd.ID] = cd
	}
	for _, cd := range cards {
		if cd.Claim != nil {
			w.violate("%s is still claimed by %s (epoch %d, lease until %s) after settling", cd.Identifier, cd.Claim.Owner, cd.Claim.Epoch, cd.Claim.LeaseUntil.Format("15:04:05"))
		}
		switch b.RoleOf(cd.State) {
		case board.RoleRunning:
			w.violate("%s is in %s (running) after settling with no live run", cd.Identifier, cd.State)
		case board.RoleEligible:
			if cd.NextAttemptAt != nil && cd.NextAttemptAt.After(now) {
				continue // waiting for its retry time
			}
			waiting := false
			for _, id := range cd.BlockedBy {
				if bc, ok := byID[id]; ok && b.RoleOf(bc.State) != board.RoleDone {
					waiting = true
				}
			}
			profile := cd.Agent
			if profile == "" {
				profile = "sim"
			}
			if !waiting && allowed[profile] && c.spendWaits() == "" {
				w.violate("%s is eligible and due (%s) but was not dispatched: %s", cd.Identifier, fmtNext(cd), cd.StateReason)
			}
		}
	}
}

func fmtNext(c board.Card) string {
	if c.NextAttemptAt == nil {
		return "no next attempt time"
	}
	return fmt.Sprintf("next attempt %s", c.NextAttemptAt.Format("15:04:05"))
}

// droverStops are the kinds of a run drover stopped itself: its reason wins
// over the agent's report.
var droverStops = map[string]bool{string(policy.KindTimeout): true, string(policy.KindStalled): true,
	string(policy.KindCancelled): true, string(policy.KindSpendLimit): true}

// checkReports: the agent's report decides its run's kind unless drover
// stopped the run or lost its claim; the first report is the one kept;
// agent_blocked is never counted.
func (c *checker) checkReports(runs []board.Run, ident map[string]string) {
	w := c.w
	want := map[string]string{board.ReportBlock: string(policy.KindAgentBlocked), board.ReportAsk: string(policy.KindInputRequired),
		board.ReportDone: string(policy.KindSucceeded)}
	reported, tried := map[string]string{}, map[string]string{}
	for _, iv := range w.invs {
		if iv.report != "" {
			reported[iv.run.ID] = iv.report
		}
		tried[iv.run.ID] = iv.tried
	}
	for _, r := range runs {
		if r.Kind == string(policy.KindAgentBlocked) && r.Counted {
			w.violate("%s attempt %d: agent_blocked was counted", ident[r.CardID], r.Attempt)
		}
		kind := reported[r.ID]
		if r.Report != nil && r.Report.Kind != tried[r.ID] {
			w.violate("%s attempt %d has a report (%s) no call of its agent made", ident[r.CardID], r.Attempt, r.Report.Kind)
		}
		if kind == "" && r.Report != nil {
			kind = r.Report.Kind // stored, though the reply was lost to a fault
		}
		if kind == "" {
			continue
		}
		if r.Report == nil || r.Report.Kind != kind {
			w.violate("%s attempt %d: the agent reported %s first, the run keeps %+v", ident[r.CardID], r.Attempt, kind, r.Report)
			continue
		}
		if r.Open() || r.Outcome == board.OutcomeLeaseLost || droverStops[r.Kind] {
			continue
		}
		if r.Kind != want[kind] {
			w.violate("%s attempt %d reported %s but ended %s (%s): the agent's report decides unless drover stopped the run", ident[r.CardID], r.Attempt, kind, r.Kind, r.Outcome)
		}
	}
}

// followHolds keeps which fingerprint each profile is held for (its
// agent_open events with a fingerprint, until it closes, pauses, opens for
// something else or an operator resumes it) and holds a routing to the
// rule: a held profile never burns a card's budget.
func (c *checker) followHolds(e board.Event, data map[string]any, ident map[string]string) {
	agent, _ := data["agent"].(string)
	switch e.Type {
	case "agent_open":
		if fp, _ := data["fingerprint"].(string); fp != "" {
			c.held[agent] = fp
		} else {
			delete(c.held, agent)
		}
	case "agent_closed", "agent_paused", "agent_resumed":
		delete(c.held, agent)
	}
	if e.RunID == "" || preRouting[e.Type] || agentCallEvent(e) {
		return
	}
	fp, _ := data["fingerprint"].(string)
	if counted, _ := data["counted"].(bool); counted && fp != "" && c.held[agent] == fp {
		c.w.violate("%s attempt %v was counted (%s) while agent profile %s was held for its failure %s: a held profile must not burn a card's budget",
			ident[e.CardID], data["attempt"], e.Type, agent, fp)
	}
}

// checkRepeatBlocks: a card blocked for a repeated failure names it, and
// its last repeat_cap failed runs of a counted kind did fail alike. (Their
// counted flag is not looked at: a hold opened later, for the same
// failure on other cards, uncounts them.)
func (c *checker) checkRepeatBlocks(cards []board.Card, runs []board.Run) {
	k := c.w.cfg.Policy.RepeatCap
	for _, cd := range cards {
		br := cd.BlockReason
		if br == nil || br.Kind != string(policy.KindRepeatedFailure) || c.w.cfg.Board.RoleOf(cd.State) != board.RoleBlocked {
			continue
		}
		var epoch []board.Run
		for _, r := range runs {
			if r.CardID == cd.ID && r.RetryEpoch == cd.RetryEpoch && (r.Outcome == board.OutcomeFailed || r.Outcome == board.OutcomeBlocked) && policy.Spec(policy.Kind(r.Kind)).Counts {
				epoch = append(epoch, r)
			}
		}
		sort.Slice(epoch, func(a, b int) bool { return epoch[a].Attempt < epoch[b].Attempt })
		if len(epoch) < k {
			c.w.violate("%s blocked for a repeated failure after %d counted runs, repeat_cap is %d", cd.Identifier, len(epoch), k)
			continue
		}
		last := epoch[len(epoch)-k:]
		for _, r := range last {
			if r.Fingerprint != last[0].Fingerprint || !policy.Informative(r.Fingerprint) {
				c.w.violate("%s blocked for a repeated failure, but its last %d counted runs failed as %s and %s", cd.Identifier, k, last[0].Fingerprint, r.Fingerprint)
			}
		}
		want := fmt.Sprintf("%d times in a row", k)
		if msg := last[k-1].Error; !strings.Contains(br.What, want) || (msg != "" && !strings.Contains(br.What, firstWords(msg))) {
			c.w.violate("%s blocked for a repeated failure says %q: it must name the failure (%q) and the repeat (%s)", cd.Identifier, br.What, msg, want)
		}
	}
}

// firstWords is the start of s, up to 30 bytes, for "it names the failure".
func firstWords(s string) string {
	if len(s) > 30 {
		return s[:30]
	}
	return s
}
