package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// hist builds an epoch: prior runs with the given kinds (stored as routed),
// then the open current run.
func hist(prior ...Kind) []board.Run {
	var h []board.Run
	for i, k := range prior {
		s := Spec(k)
		h = append(h, board.Run{ID: fmt.Sprintf("r%d", i+1), Attempt: i + 1, Kind: string(k), Counted: s.Counts, Outcome: s.Outcome})
	}
	return append(h, board.Run{ID: fmt.Sprintf("r%d", len(prior)+1), Attempt: len(prior) + 1, LogPath: "/logs/cur.log"})
}

func input(cfg Config, k Kind, h []board.Run) Input {
	return Input{
		Config:         cfg,
		Card:           board.Card{ID: "c1", Identifier: "DRV-7", State: "in_progress"},
		CardRole:       board.RoleRunning,
		Classification: Classification{Kind: k, Message: "the provider said no"},
		History:        h,
		Now:            t0,
		FailedState:    "blocked", BlockedState: "blocked", EligibleState: "ready",
		ParkedState: "awaiting_input", CompletedState: "review",
		Workspace: "/ws/DRV-7", AgentProfile: "claude",
	}
}

func TestDecideEveryKind(t *testing.T) {
	cases := []struct {
		k       Kind
		verb    Verb
		outcome board.Outcome
		counted bool
		state   string
		notify  string
		pause   bool
		delay   time.Duration // -1: no NextAttemptAt
	}{
		{KindRateLimited, VerbDefer, board.OutcomeDeferred, false, "ready", "", false, 10 * time.Second},
		{KindUsageLimited, VerbDefer, board.OutcomeDeferred, false, "ready", "", true, 10 * time.Second},
		{KindQuotaExhausted, VerbDefer, board.OutcomeDeferred, false, "ready", "profile_paused", true, -1},
		{KindProviderUnavailable, VerbRetry, board.OutcomeFailed, false, "ready", "", false, 10 * time.Second},
		{KindNetwork, VerbRetry, board.OutcomeFailed, false, "ready", "", false, time.Minute},
		{KindWorkspaceSetup, VerbRetry, board.OutcomeFailed, false, "ready", "", false, 10 * time.Second},
		{KindInterrupted, VerbRetry, board.OutcomeInterrupted, false, "ready", "", false, 0},
		{KindAuthFailed, VerbDefer, board.OutcomeDeferred, false, "ready", "profile_paused", true, -1},
		{KindConfigError, VerbDefer, board.OutcomeDeferred, false, "ready", "profile_paused", true, -1},
		{KindInvalidInput, VerbBlock, board.OutcomeBlocked, false, "blocked", "blocked", false, -1},
		{KindContextExhausted, VerbBlock, board.OutcomeBlocked, false, "blocked", "blocked", false, -1},
		{KindPermissionDenied, VerbBlock, board.OutcomeBlocked, false, "blocked", "blocked", false, -1},
		{KindRefused, VerbBlock, board.OutcomeBlocked, false, "blocked", "blocked", false, -1},
		{KindInputRequired, VerbPark, board.OutcomeParked, false, "awaiting_input", "parked", false, -1},
		{KindAgentFailed, VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
		{KindMaxTurns, VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
		{KindTimeout, VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
		{KindStalled, VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
		{KindUnknown, VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
		{KindNoProgress, VerbBlock, board.OutcomeSucceeded, false, "blocked", "blocked", false, -1},
		{KindCancelled, VerbBlock, board.OutcomeCancelled, false, "blocked", "blocked", false, -1},
		{KindSucceeded, VerbComplete, board.OutcomeSucceeded, false, "review", "", false, -1},
		{KindNone, VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
		{"bogus", VerbRetry, board.OutcomeFailed, true, "ready", "", false, 10 * time.Second},
	}
	for _, c := range cases {
		d := Decide(input(Defaults(), c.k, hist()))
		if d.Verb != c.verb || d.Outcome != c.outcome || d.Counted != c.counted || d.NextState != c.state {
			t.Errorf("%q: got verb=%s outcome=%s counted=%v state=%s; want %s %s %v %s", c.k, d.Verb, d.Outcome, d.Counted, d.NextState, c.verb, c.outcome, c.counted, c.state)
		}
		if got := strings.Join(d.Notify, ","); got != c.notify {
			t.Errorf("%q: notify %q, want %q", c.k, got, c.notify)
		}
		if (d.PauseProfile != nil) != c.pause {
			t.Errorf("%q: pause %+v", c.k, d.PauseProfile)
		}
		switch {
		case c.delay < 0 && d.NextAttemptAt != nil:
			t.Errorf("%q: unexpected next attempt %s", c.k, d.NextAttemptAt)
		case c.delay >= 0 && (d.NextAttemptAt == nil || d.NextAttemptAt.Sub(t0) != c.delay):
			t.Errorf("%q: next attempt %v, want now+%s", c.k, d.NextAttemptAt, c.delay)
		}
		if d.Explain == "" || d.Event == "" {
			t.Errorf("%q: empty explain or event: %+v", c.k, d)
		}
	}
}

func TestExplainLine(t *testing.T) {
	in := input(Defaults(), KindAgentFailed, hist(KindAgentFailed, KindAgentFailed))
	in.Rand = func() float64 { return 0 }
	d := Decide(in)
	if want := "attempt 3 of 10 failed (agent_failed); retry at 12:00:40 UTC"; d.Explain != want {
		t.Errorf("explain %q, want %q", d.Explain, want)
	}
	in = input(Defaults(), KindAgentFailed, hist(KindNetwork, KindAgentFailed))
	if d := Decide(in); !strings.HasPrefix(d.Explain, "counted attempt 2 of 10 failed (agent_failed, run attempt 3)") {
		t.Errorf("explain %q", d.Explain)
	}
}

// runUntilSettled plays kinds on one card (the last repeats) until a decision
// stops rescheduling; it returns the decisions.
func runUntilSettled(cfg Config, kinds []Kind, limit int) []Decision {
	var h []board.Run
	var out []Decision
	for i := 0; i < limit; i++ {
		k := kinds[min(i, len(kinds)-1)]
		h = append(h, board.Run{ID: fmt.Sprintf("r%d", i+1), Attempt: i + 1, LogPath: "/logs/cur.log"})
		d := Decide(input(cfg, k, h))
		h[i].Kind, h[i].Counted, h[i].Outcome = string(d.Kind), d.Counted, d.Outcome
		out = append(out, d)
		if d.Verb != VerbRetry && d.Verb != VerbDefer {
			break
		}
	}
	return out
}

func TestGiveUpExactlyAtMaxAttempts(t *testing.T) {
	for _, max := range []int{1, 3, 10} {
		cfg := Defaults()
		cfg.MaxAttempts = max
		ds := runUntilSettled(cfg, []Kind{KindAgentFailed}, 100)
		if len(ds) != max {
			t.Fatalf("max %d: %d runs", max, len(ds))
		}
		last := ds[len(ds)-1]
		if last.Verb != VerbGiveUp || last.NextState != "blocked" || last.GaveUp == nil || last.GaveUp.Attempts != max ||
			last.GaveUp.RunID != fmt.Sprintf("r%d", max) || last.GaveUp.Kind != "agent_failed" || !last.GaveUp.At.Equal(t0) {
			t.Fatalf("max %d: last decision %+v gave_up %+v", max, last, last.GaveUp)
		}
		if strings.Join(last.Notify, ",") != "gave_up" {
			t.Errorf("a give-up is one notification: %v", last.Notify)
		}
		if !strings.Contains(last.BlockReason.How, "drover card resume DRV-7") || !strings.Contains(last.BlockReason.Where, "/logs/cur.log") {
			t.Errorf("reason %+v", last.BlockReason)
		}
	}
}

func TestUncountedKindsNeverSpendBudget(t *testing.T) {
	cfg := Defaults()
	cfg.MaxAttempts = 3
	// Two counted failures, then many network/interrupted/provider failures
	// interleaved below their caps: the card is still retried.
	kinds := []Kind{KindAgentFailed, KindNetwork, KindInterrupted, KindProviderUnavailable, KindAgentFailed,
		KindNetwork, KindInterrupted, KindRateLimited, KindNetwork, KindInterrupted, KindProviderUnavailable}
	var h []board.Run
	for i, k := range kinds {
		h = append(h, board.Run{ID: fmt.Sprintf("r%d", i+1), Attempt: i + 1})
		d := Decide(input(cfg, k, h))
		if d.Verb == VerbGiveUp || d.Verb == VerbBlock {
			t.Fatalf("run %d (%s): %s: %s", i+1, k, d.Verb, d.Explain)
		}
		h[i].Kind, h[i].Counted, h[i].Outcome = string(d.Kind), d.Counted, d.Outcome
	}
	if CountedAttempts(h) != 2 {
		t.Fatalf("counted %d", CountedAttempts(h))
	}
	// The third counted failure gives up, whatever came between.
	h = append(h, board.Run{ID: "last", Attempt: len(h) + 1})
	if d := Decide(input(cfg, KindTimeout, h)); d.Verb != VerbGiveUp || d.GaveUp.Attempts != 3 {
		t.Fatalf("third counted failure: %+v", d)
	}
}

func TestPerKindCaps(t *testing.T) {
	cases := []struct {
		k    Kind
		runs int // runs until give-up: cap retries + the one that gives up
	}{
		{KindNetwork, 4}, {KindWorkspaceSetup, 4}, {KindInterrupted, 4},
		{KindProviderUnavailable, 11}, {KindRateLimited, 6},
	}
	for _, c := range cases {
		ds := runUntilSettled(Defaults(), []Kind{c.k}, 100)
		last := ds[len(ds)-1]
		if len(ds) != c.runs || last.Verb != VerbGiveUp || last.Counted || last.GaveUp.Attempts != c.runs {
			t.Errorf("%s: %d runs, last %s %+v", c.k, len(ds), last.Verb, last.GaveUp)
			continue
		}
		if !strings.Contains(last.BlockReason.What, "policy.kinds."+string(c.k)+".cap") || last.Outcome == board.OutcomeDeferred {
			t.Errorf("%s: reason %+v outcome %s", c.k, last.BlockReason, last.Outcome)
		}
	}
	// The network tiers are used in order.
	ds := runUntilSettled(Defaults(), []Kind{KindNetwork}, 100)
	for i, want := range []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute} {
		if ds[i].NextAttemptAt.Sub(t0) != want {
			t.Errorf("network retry %d at %s", i+1, ds[i].NextAttemptAt.Sub(t0))
		}
	}
	if !strings.Contains(runUntilSettled(Defaults(), []Kind{KindProviderUnavailable}, 100)[10].Explain, "fails on this card only") {
		t.Error("provider_unavailable give-up says it fails on this card only")
	}
	// usage_limited has no cap of its own: it waits for resets.
	if ds := runUntilSettled(Defaults(), []Kind{KindUsageLimited}, 50); len(ds) != 50 || ds[49].Verb != VerbDefer {
		t.Errorf("usage_limited: %d decisions, last %s", len(ds), ds[len(ds)-1].Verb)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	in := input(Defaults(), KindRateLimited, hist())
	reset := t0.Add(47 * time.Minute)
	in.Classification.RetryAt = reset
	d := Decide(in)
	if d.Verb != VerbDefer || !d.NextAttemptAt.Equal(reset) || d.Counted {
		t.Fatalf("rate limit with reset: %+v", d)
	}
	in.Classification.RetryAt = time.Time{}
	in.Classification.RetryAfter = 90 * time.Second
	if d := Decide(in); d.NextAttemptAt.Sub(t0) != 90*time.Second {
		t.Fatalf("retry-after: %s", d.NextAttemptAt.Sub(t0))
	}
	in = input(Defaults(), KindUsageLimited, hist())
	in.Classification.RetryAt = reset
	d = Decide(in)
	if d.PauseProfile == nil || d.PauseProfile.Until == nil || !d.PauseProfile.Until.Equal(reset) {
		t.Fatalf("usage limit pauses the profile until the reset: %+v", d.PauseProfile)
	}
	// A reset time in the past never schedules before the backoff.
	in = input(Defaults(), KindProviderUnavailable, hist())
	in.Classification.RetryAt = t0.Add(-time.Hour)
	if d := Decide(in); d.NextAttemptAt.Sub(t0) != 10*time.Second {
		t.Fatalf("past reset: %s", d.NextAttemptAt.Sub(t0))
	}
}

func TestProfilePauseUntilOperator(t *testing.T) {
	cfg := Defaults()
	cfg.QuotaProbe = 0
	for _, k := range []Kind{KindAuthFailed, KindQuotaExhausted, KindConfigError} {
		d := Decide(input(cfg, k, hist()))
		if d.PauseProfile == nil || d.PauseProfile.Until != nil || d.PauseProfile.Kind != k ||
			!strings.Contains(d.PauseProfile.Reason, "drover agent resume claude") || d.Counted || d.BlockReason != nil {
			t.Errorf("%s: %+v / %+v", k, d, d.PauseProfile)
		}
	}
}

func TestBlockAtOnceReason(t *testing.T) {
	in := input(Defaults(), KindInvalidInput, hist())
	in.Classification.Message = "spec.plan: required (a list of steps)"
	d := Decide(in)
	br := d.BlockReason
	if br == nil || br.Kind != "invalid_input" || !strings.Contains(br.What, "spec.plan: required") ||
		!strings.Contains(br.Where, "run r1") || !strings.Contains(br.Where, "/ws/DRV-7") ||
		!strings.Contains(br.How, "drover card edit DRV-7 --spec-file") || !strings.Contains(br.How, "drover card resume DRV-7") {
		t.Fatalf("block reason %+v", br)
	}
	if d.GaveUp != nil {
		t.Error("a block is not a give-up")
	}
}

func TestParkWithoutParkedColumnBlocks(t *testing.T) {
	in := input(Defaults(), KindInputRequired, hist())
	in.ParkedState = ""
	if d := Decide(in); d.Verb != VerbBlock || d.NextState != "blocked" || d.BlockReason == nil {
		t.Fatalf("%+v", d)
	}
}

func TestSinkIsNeverLeft(t *testing.T) {
	for _, k := range append(Kinds, KindSucceeded) {
		in := input(Defaults(), k, hist())
		in.Card.State, in.CardRole = "cancelled", board.RoleCancelled
		d := Decide(in)
		if d.Verb != VerbHold || d.NextState != "cancelled" || d.NextAttemptAt != nil || len(d.Notify) != 0 {
			t.Errorf("%s: %+v", k, d)
		}
	}
	in := input(Defaults(), KindCancelled, hist())
	in.Card.State, in.CardRole = "backlog", board.RoleInactive
	if d := Decide(in); d.Verb != VerbHold || d.NextState != "backlog" {
		t.Errorf("cancelled run holds the card where the operator put it: %+v", d)
	}
}

func TestNoProgress(t *testing.T) {
	cfg := Defaults()
	var h []board.Run
	for i := 1; i <= 3; i++ {
		h = append(h, board.Run{ID: fmt.Sprintf("r%d", i), Attempt: i})
		in := input(cfg, KindSucceeded, h)
		in.CardStillEligibleAfterSuccess = true
		d := Decide(in)
		h[i-1].Kind, h[i-1].Outcome = string(d.Kind), d.Outcome
		if i < 3 {
			if d.Verb != VerbRetry || d.NextState != "ready" || !d.NextAttemptAt.Equal(t0) || d.Counted {
				t.Fatalf("clean exit %d: %+v", i, d)
			}
			continue
		}
		if d.Verb != VerbBlock || d.Kind != KindNoProgress || d.Outcome != board.OutcomeSucceeded ||
			d.BlockReason.Kind != "no_progress" || !strings.Contains(d.BlockReason.How, "drover card mv DRV-7 done") {
			t.Fatalf("third clean exit: %+v %+v", d, d.BlockReason)
		}
	}
	// A failure in between restarts the count.
	h = hist(KindSucceeded, KindSucceeded, KindAgentFailed, KindSucceeded)
	in := input(cfg, KindSucceeded, h)
	in.CardStillEligibleAfterSuccess = true
	if d := Decide(in); d.Verb != VerbRetry {
		t.Fatalf("after a failure: %+v", d)
	}
}

func TestUnboundedMaxAttempts(t *testing.T) {
	cfg := Defaults()
	cfg.MaxAttempts = -1
	ds := runUntilSettled(cfg, []Kind{KindAgentFailed}, 500)
	if len(ds) != 500 || ds[499].Verb != VerbRetry || !strings.HasPrefix(ds[499].Explain, "attempt 500 failed") {
		t.Fatalf("unbounded: %d, %+v", len(ds), ds[len(ds)-1])
	}
}

// The crash-loop guard counts interruptions in a row: interruptions with
// other outcomes between them (graceful restarts during deploys) do not add
// up to a block, while three in a row do.
func TestInterruptedCapCountsOnlyARun(t *testing.T) {
	cfg := Defaults()
	spread := Decide(input(cfg, KindInterrupted, hist(KindInterrupted, KindAgentFailed, KindInterrupted, KindInterrupted)))
	if spread.Verb != VerbRetry {
		t.Fatalf("two interruptions in a row after a failure: verb %s (%s), want retry", spread.Verb, spread.Explain)
	}
	loop := Decide(input(cfg, KindInterrupted, hist(KindAgentFailed, KindInterrupted, KindInterrupted, KindInterrupted)))
	if loop.Verb != VerbGiveUp {
		t.Fatalf("a fourth interruption in a row: verb %s (%s), want give_up", loop.Verb, loop.Explain)
	}
}

// A block reason's "what" is one readable line even when the agent's text
// spans many; the whole text stays on the run.
func TestBlockReasonWhatIsOneLine(t *testing.T) {
	in := input(Defaults(), KindRefused, hist())
	in.Classification.Message = "line one\n\tline two\n" + strings.Repeat("x", 2000)
	d := Decide(in)
	if d.BlockReason == nil || strings.ContainsAny(d.BlockReason.What, "\n\t") || len(d.BlockReason.What) > 1000 ||
		!strings.HasPrefix(d.BlockReason.What, "refused: line one line two") {
		t.Fatalf("what = %q", d.BlockReason.What)
	}
}

// The crash-loop guard counts interruptions in a row; the give-up says so,
// and never calls the run's rank in a row its count in the epoch (issue 13).
func TestInterruptedGiveUpCountsInARow(t *testing.T) {
	h := hist(KindInterrupted, KindInterrupted, KindAgentFailed, KindInterrupted, KindInterrupted, KindInterrupted)
	d := Decide(input(Defaults(), KindInterrupted, h))
	if d.Verb != VerbGiveUp {
		t.Fatalf("verb = %s: %s", d.Verb, d.Explain)
	}
	if !strings.Contains(d.Explain, "4th time in a row") || strings.Contains(d.Explain, "4th time in this retry epoch") {
		t.Fatalf("explain = %q; want the 4th interruption in a row (the epoch has 6)", d.Explain)
	}
	if !strings.Contains(d.Explain, "attempts 4–7") {
		t.Fatalf("explain = %q; want the attempts of the run named", d.Explain)
	}
}

// TestProviderGiveUpTellsTheBreaker: a provider_unavailable give-up says the
// card is the only one failing only when the profile's breaker stayed closed;
// when the breaker opened for the same outage it says the provider failed for
// every card and does not send the operator to change the card.
func TestProviderGiveUpTellsTheBreaker(t *testing.T) {
	giveUp := func(tripped bool) Decision {
		var h []board.Run
		for i := 0; ; i++ {
			h = append(h, board.Run{ID: fmt.Sprintf("r%d", i+1), Attempt: i + 1, LogPath: "/logs/cur.log"})
			in := input(Defaults(), KindProviderUnavailable, h)
			in.AgentProfile, in.ProfileBreakerTripped = "claude-main", tripped
			d := Decide(in)
			h[i].Kind, h[i].Counted, h[i].Outcome = string(d.Kind), d.Counted, d.Outcome
			if d.Verb == VerbGiveUp {
				return d
			}
			if i > 50 {
				t.Fatal("provider_unavailable never gave up")
			}
		}
	}
	outage := giveUp(true)
	for _, s := range []string{outage.Explain, outage.BlockReason.What, outage.BlockReason.How} {
		if strings.Contains(s, "this card only") || strings.Contains(s, "change the card") {
			t.Errorf("breaker opened for the outage, yet the reason blames the card: %q", s)
		}
	}
	if !strings.Contains(outage.Explain, "breaker") || !strings.Contains(outage.BlockReason.How, "drover agent ls") {
		t.Errorf("outage give-up does not name the breaker: explain %q how %q", outage.Explain, outage.BlockReason.How)
	}
	alone := giveUp(false)
	if !strings.Contains(alone.Explain, "this card only") || !strings.Contains(alone.BlockReason.How, "drover card edit") {
		t.Errorf("a card failing alone: explain %q how %q", alone.Explain, alone.BlockReason.How)
	}
}

// TestAuthPauseNamesTheVariable: a CLI that says which credential variable
// it lacks gets a how that names it and says how drover passes it on
// (Codex: "Missing environment variable: `OPENAI_API_KEY`.").
func TestAuthPauseNamesTheVariable(t *testing.T) {
	in := input(Defaults(), KindAuthFailed, []board.Run{{ID: "r1", Attempt: 1}})
	in.Classification.Message = "Missing environment variable: `OPENAI_API_KEY`."
	d := Decide(in)
	if d.PauseProfile == nil {
		t.Fatalf("auth_failed did not pause the profile: %+v", d)
	}
	_, how, _ := strings.Cut(d.PauseProfile.Reason, "; ")
	if !strings.Contains(how, "set OPENAI_API_KEY") || !strings.Contains(how, "env_passthrough") {
		t.Errorf("how %q does not say to set OPENAI_API_KEY and pass it through", how)
	}
	in.Classification.Message = "Invalid API key · Fix external API key"
	if r := Decide(in).PauseProfile.Reason; strings.Contains(r, "env_passthrough") {
		t.Errorf("no variable named, yet the how speaks of one: %q", r)
	}
}

// TestForbiddenPauseNamesTheKeysAccess: a 403 pauses the profile with a how
// about the key's access, not a new login.
func TestForbiddenPauseNamesTheKeysAccess(t *testing.T) {
	in := input(Defaults(), KindAuthFailed, []board.Run{{ID: "r1", Attempt: 1}})
	in.Classification.Message = "Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource."
	d := Decide(in)
	if d.PauseProfile == nil || !strings.Contains(d.PauseProfile.Reason, "refused access (HTTP 403") || !strings.Contains(d.PauseProfile.Reason, "drover agent resume") {
		t.Fatalf("403 pause: %+v", d.PauseProfile)
	}
	in.Classification.Message = "Invalid API key · Fix external API key"
	if r := Decide(in).PauseProfile.Reason; strings.Contains(r, "403") {
		t.Errorf("a 401 speaks of 403: %q", r)
	}
}

func TestQuotaHoldsWithProbes(t *testing.T) {
	d := Decide(input(Defaults(), KindQuotaExhausted, hist()))
	if d.PauseProfile == nil || d.PauseProfile.Until == nil || !d.PauseProfile.Until.Equal(t0.Add(30*time.Minute)) ||
		d.NextAttemptAt != nil || d.Counted || d.BlockReason != nil || !strings.Contains(d.Explain, "probe") {
		t.Fatalf("%+v / %+v", d, d.PauseProfile)
	}
}
