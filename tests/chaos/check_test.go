package chaos_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// report is what one chaos run did and found.
type report struct {
	Duration   time.Duration
	Kills      int
	Lives      int // drover processes started
	Cards      int
	Runs       int
	Agents     int // agent processes recorded on the side channel
	Outcomes   map[string]int
	States     map[string]int
	Notices    int // webhook deliveries received
	Redelivery int // duplicate deliveries explained by a kill in the at-least-once window
	Violations []string
}

func (r report) String() string {
	return fmt.Sprintf("duration=%s kills=%d lives=%d cards=%d runs=%d agents=%d notices=%d redeliveries=%d outcomes=%v states=%v violations=%d",
		r.Duration.Round(time.Second), r.Kills, r.Lives, r.Cards, r.Runs, r.Agents, r.Notices, r.Redelivery, r.Outcomes, r.States, len(r.Violations))
}

// openStore opens the cluster's store directly (read-only use).
func (c *cluster) openStore() (*sqlstore.DB, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return sqlstore.Open(ctx, c.o.DSN)
}

// settledRole: a card in it needs nothing more from automation right now.
func settledRole(r board.Role) bool {
	switch r {
	case board.RoleCompleted, board.RoleDone, board.RoleBlocked, board.RoleParked, board.RoleCancelled:
		return true
	}
	return false
}

// settled reports whether nothing is left to do: no claim, no open run,
// every card settled (or eligible with a retry in the future), and every
// webhook notification delivered.
func (c *cluster) settled(ctx context.Context, st store.Store, want int) (bool, string) {
	cards, err := st.ListCards(ctx, store.CardFilter{})
	if err != nil {
		return false, err.Error()
	}
	if len(cards) < want {
		return false, fmt.Sprintf("%d of %d cards exist", len(cards), want)
	}
	now := time.Now()
	for _, cd := range cards {
		if cd.Claim != nil {
			return false, cd.Identifier + " is claimed by " + cd.Claim.Owner
		}
		role := c.cfg.Board.RoleOf(cd.State)
		if !settledRole(role) && !(role == board.RoleEligible && cd.NextAttemptAt != nil && cd.NextAttemptAt.After(now.Add(time.Minute))) {
			return false, cd.Identifier + " is " + cd.State
		}
	}
	open, err := st.ListRuns(ctx, store.RunFilter{Open: store.Bool(true)})
	if err != nil {
		return false, err.Error()
	}
	if len(open) > 0 {
		return false, fmt.Sprintf("%d runs open", len(open))
	}
	pending, err := st.ListOutbox(ctx, store.OutboxFilter{Pending: store.Bool(true)})
	if err != nil {
		return false, err.Error()
	}
	if len(pending) > 0 {
		return false, fmt.Sprintf("%d notifications pending", len(pending))
	}
	return true, ""
}

// waitSettled restarts every node that is down and waits for settling.
func (c *cluster) waitSettled(want int, limit time.Duration) error {
	for _, nd := range c.nodes {
		c.start(nd)
	}
	st, err := c.openStore()
	if err != nil {
		return err
	}
	defer st.Close()
	began := time.Now()
	deadline := began.Add(limit)
	why, logged := "", began
	defer func() { c.t.Logf("settling took %s", time.Since(began).Round(100*time.Millisecond)) }()
	for time.Now().Before(deadline) {
		if time.Since(logged) > 10*time.Second {
			c.t.Logf("settling: %s", why)
			logged = time.Now()
		}
		ok, w := c.settled(context.Background(), st, want)
		if ok {
			// Stable for a little while (a retry could be about to fire).
			time.Sleep(2 * pollInterval)
			if ok, w = c.settled(context.Background(), st, want); ok {
				return nil
			}
		}
		why = w
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not settled after %s: %s", limit, why)
}

// check reads the store and the side channel and lists every violation of
// drover's invariants.
func (c *cluster) check(rep *report) {
	v := func(format string, a ...any) { rep.Violations = append(rep.Violations, fmt.Sprintf(format, a...)) }
	ctx := context.Background()
	st, err := c.openStore()
	if err != nil {
		v("open store: %v", err)
		return
	}
	defer st.Close()
	cards, err := st.ListCards(ctx, store.CardFilter{})
	if err != nil {
		v("list cards: %v", err)
		return
	}
	runs, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		v("list runs: %v", err)
		return
	}
	outbox, err := st.ListOutbox(ctx, store.OutboxFilter{})
	if err != nil {
		v("list outbox: %v", err)
		return
	}
	lives, bad := c.mon.snapshot()
	rep.Cards, rep.Runs, rep.Agents = len(cards), len(runs), len(lives)
	rep.Outcomes, rep.States = map[string]int{}, map[string]int{}
	for _, b := range bad {
		v("side channel: %s", b)
	}
	byIdent := map[string]board.Card{}
	byID := map[string]board.Card{}
	for _, cd := range cards {
		byIdent[cd.Identifier], byID[cd.ID] = cd, cd
		rep.States[cd.State]++
	}
	runByID := map[string]board.Run{}
	for _, r := range runs {
		runByID[r.ID] = r
		rep.Outcomes[string(r.Outcome)]++
	}

	// 1. No card had two live agent processes at once.
	perCard := map[string][]life{}
	for _, l := range lives {
		perCard[l.Card] = append(perCard[l.Card], l)
		if !l.Ended && !l.Gone {
			v("agent pid %d for %s attempt %d (run %s) is still alive after settling", l.PID, l.Card, l.Attempt, l.RunID)
		}
	}
	for card, ls := range perCard {
		sort.Slice(ls, func(i, j int) bool { return ls[i].Start.Before(ls[j].Start) })
		var last life
		for i, l := range ls {
			if i > 0 && l.Start.Before(last.End) {
				v("%s: two live agents at once: run %s (attempt %d on %s, pid %d, alive until at least %s) and run %s (attempt %d on %s, pid %d, started %s)",
					card, last.RunID, last.Attempt, last.Node, last.PID, last.End.Format("15:04:05.000"), l.RunID, l.Attempt, l.Node, l.PID, l.Start.Format("15:04:05.000"))
			}
			if i == 0 || l.End.After(last.End) {
				last = l
			}
		}
	}

	// 2. Every agent process belongs to a run the store knows, and the run's
	// outcome tells the truth about how the agent ended.
	lifeByRun := map[string]life{}
	for _, l := range lives {
		lifeByRun[l.RunID] = l
		r, ok := runByID[l.RunID]
		if !ok {
			v("agent for %s attempt %d ran as run %s, which the store does not have", l.Card, l.Attempt, l.RunID)
			continue
		}
		if cd := byID[r.CardID]; cd.Identifier != l.Card || r.Attempt != l.Attempt || r.Node != l.Node {
			v("run %s is %s attempt %d on %s in the store but the agent saw %s attempt %d on %s", r.ID, cd.Identifier, r.Attempt, r.Node, l.Card, l.Attempt, l.Node)
		}
		switch l.Code {
		case "0":
			if !in(r.Outcome, board.OutcomeSucceeded, board.OutcomeInterrupted, board.OutcomeLeaseLost) {
				v("run %s: the agent exited 0 but the run's outcome is %s", r.ID, r.Outcome)
			}
		case "1":
			if !in(r.Outcome, board.OutcomeFailed, board.OutcomeBlocked, board.OutcomeInterrupted, board.OutcomeLeaseLost) {
				v("run %s: the agent exited 1 but the run's outcome is %s", r.ID, r.Outcome)
			}
		default: // stopped by a signal
			if in(r.Outcome, board.OutcomeSucceeded, board.OutcomeFailed) {
				v("run %s: the agent was stopped by a signal but the run's outcome is %s", r.ID, r.Outcome)
			}
		}
	}
	for _, r := range runs {
		if r.Open() {
			v("run %s (card %s attempt %d) has no outcome after settling", r.ID, byID[r.CardID].Identifier, r.Attempt)
			continue
		}
		l, ran := lifeByRun[r.ID]
		switch r.Outcome {
		case board.OutcomeSucceeded:
			if !ran || l.Code != "0" {
				v("run %s succeeded but its agent did not exit 0 (side channel: %+v)", r.ID, l)
			}
		case board.OutcomeFailed:
			if !ran || l.Code != "1" {
				v("run %s failed but its agent did not exit 1 (side channel: %+v)", r.ID, l)
			}
		}
	}

	// 3. Attempt numbers per (card, retry epoch) are 1..n; claim epochs are
	// distinct; counted attempts stay within max_attempts.
	type key struct {
		card  string
		epoch int
	}
	attempts := map[key][]int{}
	counted := map[key]int{}
	claimEpochs := map[string]map[int64]string{}
	for _, r := range runs {
		k := key{r.CardID, r.RetryEpoch}
		attempts[k] = append(attempts[k], r.Attempt)
		if r.Counted {
			counted[k]++
		}
		if claimEpochs[r.CardID] == nil {
			claimEpochs[r.CardID] = map[int64]string{}
		}
		if other, dup := claimEpochs[r.CardID][r.ClaimEpoch]; dup {
			v("%s: runs %s and %s share claim epoch %d", byID[r.CardID].Identifier, other, r.ID, r.ClaimEpoch)
		}
		claimEpochs[r.CardID][r.ClaimEpoch] = r.ID
	}
	for k, as := range attempts {
		sort.Ints(as)
		for i, a := range as {
			if a != i+1 {
				v("%s retry epoch %d: attempt numbers %v have a gap or a duplicate", byID[k.card].Identifier, k.epoch, as)
				break
			}
		}
		if counted[k] > maxAttempts {
			v("%s retry epoch %d: %d counted attempts, more than max_attempts %d", byID[k.card].Identifier, k.epoch, counted[k], maxAttempts)
		}
	}

	// 4. Every card reached a truthful state, and no claim is left.
	now := time.Now()
	for _, cd := range cards {
		if cd.Claim != nil {
			v("%s is still claimed by %s (epoch %d, lease until %s) after settling", cd.Identifier, cd.Claim.Owner, cd.Claim.Epoch, cd.Claim.LeaseUntil.Format(time.RFC3339))
		}
		role := c.cfg.Board.RoleOf(cd.State)
		var lastRun *board.Run
		for i := range runs {
			r := &runs[i]
			if r.CardID == cd.ID && r.RetryEpoch == cd.RetryEpoch && (lastRun == nil || r.Attempt > lastRun.Attempt) {
				lastRun = r
			}
		}
		switch {
		case role == board.RoleEligible && cd.NextAttemptAt != nil && cd.NextAttemptAt.After(now):
			// waiting for a retry, and says when
		case role == board.RoleCompleted || role == board.RoleDone:
			if lastRun == nil || lastRun.Outcome != board.OutcomeSucceeded {
				v("%s is in %s but its last run did not succeed (%+v)", cd.Identifier, cd.State, lastRun)
			}
		case role == board.RoleBlocked:
			if cd.BlockReason == nil || cd.BlockReason.What == "" || cd.BlockReason.How == "" {
				v("%s is blocked without a reason that says what and how (%+v)", cd.Identifier, cd.BlockReason)
			}
			if lastRun == nil || lastRun.Outcome == board.OutcomeSucceeded {
				v("%s is blocked but its last run is %+v", cd.Identifier, lastRun)
			}
		case role == board.RoleParked:
		default:
			v("%s is in %s (role %s), which is not a settled, truthful state", cd.Identifier, cd.State, role)
		}
	}

	// 5. No notification key was delivered twice, except a redelivery after
	// a kill in the at-least-once window (delivered, then killed before the
	// delivery was recorded); every webhook notification was delivered.
	got := c.deliveries()
	rep.Notices = len(got)
	first := map[string]delivery{}
	for _, d := range got {
		f, dup := first[d.Key]
		if !dup {
			first[d.Key] = d
			continue
		}
		if c.killBetween(f.At.Add(-50*time.Millisecond), d.At) {
			rep.Redelivery++
			continue
		}
		v("notification %s (%s) delivered twice (%s and %s) with no kill in between", d.Key, d.Event, f.At.Format("15:04:05.000"), d.At.Format("15:04:05.000"))
	}
	for _, it := range outbox {
		if it.Channel != "webhook" {
			continue
		}
		if it.DeliveredAt == nil {
			v("notification %s was never delivered (dead=%v, last error %q)", it.Key, it.Dead, it.LastError)
		} else if _, ok := first[it.Key]; !ok {
			v("notification %s is marked delivered but the receiver never got it", it.Key)
		}
	}
}

func (c *cluster) killBetween(from, to time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.kills {
		if !k.At.Before(from) && !k.At.After(to) {
			return true
		}
	}
	return false
}

func in(o board.Outcome, set ...board.Outcome) bool {
	for _, s := range set {
		if o == s {
			return true
		}
	}
	return false
}

// claimWatch samples the store while faults run: a claim whose lease ended
// more than one lease period (plus a tick) ago, while some node has been up
// the whole time, is a claim held by a dead owner for too long.
func (c *cluster) claimWatch(ctx context.Context, violations *[]string) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	seen := map[string]bool{}
	go func() {
		defer close(stopped)
		st, err := c.openStore()
		if err != nil {
			*violations = append(*violations, "claim watch: "+err.Error())
			return
		}
		defer st.Close()
		bound := lease + 2*pollInterval + time.Second
		for {
			select {
			case <-done:
				return
			case <-time.After(250 * time.Millisecond):
			}
			cards, err := st.ListCards(ctx, store.CardFilter{Claimed: store.Bool(true)})
			if err != nil {
				continue
			}
			now := time.Now()
			for _, cd := range cards {
				cl := cd.Claim
				if cl == nil || !cl.LeaseUntil.Before(now.Add(-bound)) {
					continue
				}
				if !c.someNodeUpSince(cl.LeaseUntil) {
					continue
				}
				k := cd.ID + "/" + strconv.FormatInt(cl.Epoch, 10)
				if !seen[k] {
					seen[k] = true
					*violations = append(*violations, fmt.Sprintf("%s still claimed by %s (epoch %d) %s after its lease ended, with a live node all along",
						cd.Identifier, cl.Owner, cl.Epoch, now.Sub(cl.LeaseUntil).Round(10*time.Millisecond)))
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func (c *cluster) someNodeUpSince(t time.Time) bool {
	for _, nd := range c.nodes {
		if up, since := nd.up(); up && since.Before(t) {
			return true
		}
	}
	return false
}
