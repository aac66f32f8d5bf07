package policy

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

var sinkRoles = map[string]board.Role{"blocked": board.RoleBlocked, "done": board.RoleDone, "cancelled": board.RoleCancelled}

func randConfig(r *rand.Rand) Config {
	cfg := Defaults()
	cfg.MaxAttempts = []int{-1, 1, 2, 3, 5, 10}[r.Intn(6)]
	cfg.ReleaseChurnCap = 1 + r.Intn(6)
	cfg.ContinuationCap = 1 + r.Intn(4)
	for _, k := range []Kind{KindNetwork, KindWorkspaceSetup, KindInterrupted, KindProviderUnavailable, KindRateLimited} {
		if r.Intn(3) == 0 {
			c := 1 + r.Intn(4)
			cfg.Kinds[k] = KindPolicy{Cap: &c}
		}
	}
	if r.Intn(4) == 0 {
		cfg.FailedState = "cancelled"
	}
	return cfg
}

// checkDecision asserts the invariants every decision must keep.
func checkDecision(t *testing.T, ctx string, in Input, d Decision) {
	t.Helper()
	fail := func(f string, a ...any) { t.Fatalf("%s: %s\ndecision %+v", ctx, fmt.Sprintf(f, a...), d) }
	if d.NextState == "" || d.Explain == "" || d.Event == "" || d.Outcome == "" || d.Verb == "" {
		fail("empty NextState/Explain/Event/Outcome/Verb")
	}
	if in.CardRole.IsSink() && (d.NextState != in.Card.State || d.Verb != VerbHold || d.NextAttemptAt != nil) {
		fail("moved a card out of sink %s", in.Card.State)
	}
	if d.Counted != Spec(d.Kind).Counts || (d.Counted && !Spec(in.Classification.Kind).Counts && known(in.Classification.Kind) && in.Classification.Kind != "") {
		fail("counted=%v for kind %s", d.Counted, d.Kind)
	}
	switch d.Verb {
	case VerbBlock, VerbGiveUp:
		br := d.BlockReason
		if br == nil || br.What == "" || br.Where == "" || br.How == "" || !strings.Contains(br.How, "drover ") {
			fail("block/give-up without what/where/how: %+v", br)
		}
		if len(d.Notify) != 1 {
			fail("a block or give-up is exactly one notification: %v", d.Notify)
		}
		if d.NextAttemptAt != nil {
			fail("a blocked card has no next attempt")
		}
		if d.Verb == VerbGiveUp {
			if d.GaveUp == nil || d.GaveUp.Reason == "" || d.GaveUp.Kind == "" || d.GaveUp.Attempts < 1 || d.NextState != in.FailedState {
				fail("give-up without a stamp in failed_state: %+v", d.GaveUp)
			}
		} else if d.NextState != in.BlockedState || d.GaveUp != nil {
			fail("block must go to %s without a give-up stamp", in.BlockedState)
		}
	case VerbRetry, VerbDefer:
		if d.NextState != in.EligibleState {
			fail("retry/defer must wait in the eligible column")
		}
		if d.NextAttemptAt == nil && d.PauseProfile == nil {
			fail("retry/defer without a time or a held profile to wait on")
		}
		if d.NextAttemptAt != nil && d.NextAttemptAt.Before(in.Now) {
			fail("next attempt in the past")
		}
		if d.GaveUp != nil || d.BlockReason != nil {
			fail("retry with a block reason")
		}
	case VerbPark:
		if d.NextState != in.ParkedState {
			fail("park outside the parked column")
		}
	case VerbComplete, VerbHold:
	default:
		fail("verb %q not allowed from Decide", d.Verb)
	}
	if d.GaveUp != nil && d.Verb != VerbGiveUp {
		fail("give-up stamp on %s", d.Verb)
	}
}

var playKinds = append(append([]Kind{}, Kinds...), KindSucceeded, KindSucceeded, KindAgentFailed, KindAgentFailed, KindNone, "bogus")

// TestPropertyRandomPlays plays thousands of random cards through Decide and
// DecideRelease, feeding each decision back into the history as the store
// would, and checks the invariants at every step and at the end.
func TestPropertyRandomPlays(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	for play := 0; play < 5000; play++ {
		cfg := randConfig(r)
		card := board.Card{ID: "c", Identifier: fmt.Sprintf("DRV-%d", play), State: "in_progress"}
		role := board.RoleRunning
		now := t0
		var h []board.Run
		ctx := func(step int) string { return fmt.Sprintf("play %d step %d cfg max=%d", play, step, cfg.MaxAttempts) }
		for step := 0; step < 60; step++ {
			if r.Intn(40) == 0 { // an operator moves the card into a sink mid-run
				for name, ro := range sinkRoles {
					card.State, role = name, ro
					break
				}
			}
			h = append(h, board.Run{ID: fmt.Sprintf("r%d", step+1), Attempt: step + 1, LogPath: "/l"})
			var d Decision
			if r.Intn(6) == 0 {
				in := ReleaseInput{Config: cfg, Card: card, CardRole: role, History: h, Reason: "no slot", Now: now,
					EligibleState: "ready", BlockedState: "blocked"}
				d = DecideRelease(in)
				if d.NextState == "" || d.Explain == "" || d.Outcome != board.OutcomeReleased || d.Counted {
					t.Fatalf("%s: release %+v", ctx(step), d)
				}
				if role.IsSink() && d.NextState != card.State {
					t.Fatalf("%s: release moved a card out of a sink", ctx(step))
				}
				if d.Verb == VerbBlock && (d.BlockReason == nil || !strings.Contains(d.BlockReason.How, "drover ")) {
					t.Fatalf("%s: churn block without how", ctx(step))
				}
			} else {
				k := playKinds[r.Intn(len(playKinds))]
				in := input(cfg, k, h)
				in.Card, in.CardRole, in.Now = card, role, now
				in.FailedState = cfg.FailedState
				in.Rand = r.Float64
				in.CardStillEligibleAfterSuccess = r.Intn(2) == 0
				if r.Intn(3) == 0 {
					in.Classification.RetryAt = now.Add(time.Duration(r.Intn(7200)-600) * time.Second)
				}
				d = Decide(in)
				checkDecision(t, ctx(step), in, d)
			}
			h[step].Outcome, h[step].Kind, h[step].Counted = d.Outcome, string(d.Kind), d.Counted
			if cfg.MaxAttempts > 0 && CountedAttempts(h) > cfg.MaxAttempts {
				t.Fatalf("%s: %d counted attempts exceed max_attempts %d", ctx(step), CountedAttempts(h), cfg.MaxAttempts)
			}
			if d.Verb != VerbRetry && d.Verb != VerbDefer && d.Verb != VerbRelease {
				break // settled: blocked, given up, parked, completed or held
			}
			if d.NextAttemptAt != nil {
				now = *d.NextAttemptAt
			}
			card.State, role = "in_progress", board.RoleRunning
		}
	}
}

// TestPropertyTerminates: with a bounded max_attempts, a card that only ever
// fails with kinds that reschedule under a budget settles within the sum of its
// budgets — nothing retries without limit.
func TestPropertyTerminates(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	bounded := []Kind{KindAgentFailed, KindMaxTurns, KindTimeout, KindStalled, KindUnknown, KindNetwork,
		KindWorkspaceSetup, KindInterrupted, KindProviderUnavailable, KindRateLimited}
	for play := 0; play < 3000; play++ {
		cfg := randConfig(r)
		if cfg.MaxAttempts < 0 {
			cfg.MaxAttempts = 1 + r.Intn(10)
		}
		bound := cfg.MaxAttempts
		for _, k := range bounded {
			if c := cfg.Cap(k); c != NoCap {
				bound += c + 1
			}
		}
		var h []board.Run
		settled := false
		for step := 0; step < bound; step++ {
			h = append(h, board.Run{ID: fmt.Sprintf("r%d", step+1), Attempt: step + 1})
			in := input(cfg, bounded[r.Intn(len(bounded))], h)
			in.FailedState = cfg.FailedState
			d := Decide(in)
			checkDecision(t, fmt.Sprintf("play %d step %d", play, step), in, d)
			h[step].Outcome, h[step].Kind, h[step].Counted = d.Outcome, string(d.Kind), d.Counted
			if d.Verb == VerbGiveUp {
				settled = true
				break
			}
		}
		if !settled {
			t.Fatalf("play %d: still retrying after %d runs (max_attempts %d)", play, bound, cfg.MaxAttempts)
		}
	}
}

// TestPropertyArbitraryHistories: Decide keeps its invariants on any stored
// history, even one a buggy writer left inconsistent.
func TestPropertyArbitraryHistories(t *testing.T) {
	r := rand.New(rand.NewSource(99))
	outcomes := []board.Outcome{board.OutcomeSucceeded, board.OutcomeFailed, board.OutcomeReleased, board.OutcomeDeferred,
		board.OutcomeInterrupted, board.OutcomeLeaseLost, board.OutcomeNone}
	roles := []board.Role{board.RoleRunning, board.RoleRunning, board.RoleEligible, board.RoleInactive, board.RoleBlocked, board.RoleDone, board.RoleCancelled, ""}
	for i := 0; i < 5000; i++ {
		var h []board.Run
		for j := r.Intn(25); j > 0; j-- {
			h = append(h, board.Run{ID: fmt.Sprint(j), Attempt: r.Intn(30), Kind: string(playKinds[r.Intn(len(playKinds))]),
				Counted: r.Intn(2) == 0, Outcome: outcomes[r.Intn(len(outcomes))]})
		}
		cfg := randConfig(r)
		in := input(cfg, playKinds[r.Intn(len(playKinds))], h)
		in.FailedState = cfg.FailedState
		in.CardRole = roles[r.Intn(len(roles))]
		if in.CardRole.IsSink() {
			in.Card.State = string(in.CardRole)
		}
		in.CardStillEligibleAfterSuccess = r.Intn(2) == 0
		d := Decide(in)
		checkDecision(t, fmt.Sprintf("history %d", i), in, d)
		if prior := CountedAttempts(h[:max(len(h)-1, 0)]); cfg.MaxAttempts > 0 && d.Counted && prior+1 >= cfg.MaxAttempts && d.Verb != VerbGiveUp && !in.CardRole.IsSink() {
			t.Fatalf("history %d: counted run at or past the budget (%d prior) did not give up: %+v", i, prior, d)
		}
	}
}

func TestPropertyDelayNeverExceedsMax(t *testing.T) {
	cfg := Defaults()
	f := func(n uint16, r float64, base, spread uint32, jitter uint8) bool {
		cfg.Backoff = Backoff{Base: time.Duration(base%1e6+1) * time.Millisecond, Jitter: float64(jitter%101) / 100}
		cfg.Backoff.Max = cfg.Backoff.Base + time.Duration(spread%1e7)*time.Millisecond
		if r < 0 {
			r = -r
		}
		r -= float64(int(r))
		d := Delay(cfg, KindAgentFailed, int(n), func() float64 { return r })
		return d >= 0 && d <= cfg.Backoff.Max
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}
