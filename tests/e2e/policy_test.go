package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

func eventsOfType(evs []event, typ string) []event {
	var out []event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// giveUp runs one always-failing card to its end and checks the give-up
// facts. restarts > 0 crash-restarts serve (SIGKILL) that many times while
// the card waits between attempts.
func giveUp(t *testing.T, backend testkit.Backend, maxAttempts, restarts int) {
	h := testkit.NewReceiver(t)
	// The same simulated failure every time: the repeat cap would block it
	// at the third (truth_test.go); this is about max_attempts alone.
	pol := "  repeat_cap: -1\n"
	backoff := ""
	if maxAttempts != 10 {
		pol += fmt.Sprintf("  max_attempts: %d\n", maxAttempts)
	}
	if restarts > 0 {
		// Long enough between attempts to restart serve without racing a run.
		backoff = "  backoff: {base: 2500ms, max: 2500ms, jitter: 0}\n"
	}
	w := wf{Default: "sim", Policy: pol + backoff, Notify: notifyYAML(h)}
	text := w.render()
	if backoff != "" {
		text = strings.Replace(text, "  backoff: {base: 100ms, max: 300ms, jitter: 0}\n", "", 1)
	}
	e := newEnv(t, wf{}, "", backend)
	e.writeFile("WORKFLOW.md", text)
	c := e.addCard("always fails", "--spec", `{"sim":["agent_failed"],"sim_delay":"20ms"}`)
	e.start()
	// Crash-restart serve (SIGKILL) whenever the card waits for its next
	// attempt, at most once per attempt, until it gives up.
	done, lastAt := 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for done < restarts && time.Now().Before(deadline) {
		cur := e.card(c.Identifier)
		if cur.State == "blocked" {
			break
		}
		if len(cur.Runs) > lastAt && cur.Claim == nil && cur.State == "ready" && cur.NextAttemptAt != nil && time.Until(*cur.NextAttemptAt) > 300*time.Millisecond {
			e.kill(syscall.SIGKILL)
			e.start()
			done++
			lastAt = len(cur.Runs)
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
	if restarts > 0 {
		t.Logf("restarted serve %d times between attempts", done)
		if done == 0 {
			t.Fatalf("never caught the card between attempts to restart serve")
		}
	}
	eventually(t, 60*time.Second, c.Identifier+" ends blocked", func() bool { return e.card(c.Identifier).State == "blocked" })
	eventually(t, 10*time.Second, "the gave_up notification arrives", func() bool { return mentioning(h, `"gave_up"`, c.Identifier) >= 1 })
	// Give the outbox worker time to (wrongly) deliver a second row.
	time.Sleep(1500 * time.Millisecond)

	rs := e.runsInOrder(c.Identifier)
	if len(rs) != maxAttempts {
		t.Fatalf("%d runs (attempts %v), want exactly max_attempts=%d", len(rs), attempts(rs), maxAttempts)
	}
	for i, r := range rs {
		if r.Attempt != i+1 || r.Outcome != "failed" || r.Kind != "agent_failed" || !r.Counted || r.RetryEpoch != rs[0].RetryEpoch {
			t.Errorf("run %d: attempt %d outcome %s kind %s counted %v epoch %d; want attempt %d failed agent_failed counted",
				i, r.Attempt, r.Outcome, r.Kind, r.Counted, r.RetryEpoch, i+1)
		}
	}
	cur := e.card(c.Identifier)
	var gu struct {
		RunID    string `json:"run_id"`
		Attempts int    `json:"attempts"`
		Kind     string `json:"kind"`
		Reason   string `json:"reason"`
	}
	if len(cur.GaveUp) == 0 || string(cur.GaveUp) == "null" || json.Unmarshal(cur.GaveUp, &gu) != nil {
		t.Fatalf("card has no gave_up stamp: %s", cur.GaveUp)
	}
	if gu.Attempts != maxAttempts || gu.Kind != "agent_failed" || gu.RunID != rs[len(rs)-1].ID {
		t.Errorf("gave_up %+v; want attempts %d, kind agent_failed, the last run", gu, maxAttempts)
	}
	if cur.Claim != nil || cur.NextAttemptAt != nil {
		t.Errorf("a given-up card holds a claim %+v or a schedule %v", cur.Claim, cur.NextAttemptAt)
	}
	if n := mentioning(h, c.Identifier); n != 1 {
		t.Errorf("webhook received %d messages about %s, want exactly one (gave_up):\n%s", n, c.Identifier, received(h))
	}
	if n := len(eventsOfType(e.events(c.Identifier), "gave_up")); n != 1 {
		t.Errorf("%d gave_up events, want 1", n)
	}
}

func TestGiveUpAfterThreeAttempts(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) { giveUp(t, backend, 3, 0) })
}

func TestGiveUpAfterTheDefaultTenAttempts(t *testing.T) {
	t.Parallel()
	giveUp(t, testkit.SQLite, 10, 0)
}

func TestGiveUpAcrossRestarts(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) { giveUp(t, backend, 3, 2) })
}

// A card missing a field its profile's spec_schema requires: no agent
// process, one block event, no release, a reason naming the field and the
// resume command; edit + resume makes it run.
func TestInvalidSpecBlocksOnceWithoutASession(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		w := wf{Profiles: `    checked:
      kind: command
      command: ./agent.sh
      spec_schema: {type: object, required: [plan], properties: {plan: {type: string}}}
`}
		e := newEnv(t, w, `log_end; exit 0`, backend)
		c := e.addCard("needs a plan", "--agent", "checked", "--spec", `{"notes":"no plan here"}`)
		e.start()
		eventually(t, 15*time.Second, c.Identifier+" is blocked", func() bool { return e.card(c.Identifier).State == "blocked" })
		// A few more ticks: nothing else may happen to it.
		time.Sleep(1 * time.Second)
		cur := e.card(c.Identifier)
		if cur.State != "blocked" || cur.Claim != nil {
			t.Fatalf("state %s claim %+v; want blocked and unclaimed", cur.State, cur.Claim)
		}
		if n := len(e.starts()); n != 0 {
			t.Errorf("%d agent processes started for an invalid card, want 0", n)
		}
		if rs := e.runs(c.Identifier); len(rs) != 0 {
			t.Errorf("%d runs for an invalid card, want 0", len(rs))
		}
		evs := e.events(c.Identifier)
		if n := len(eventsOfType(evs, "blocked")); n != 1 {
			t.Errorf("%d blocked events, want exactly 1", n)
		}
		for _, typ := range []string{"released", "claimed", "started"} {
			if n := len(eventsOfType(evs, typ)); n != 0 {
				t.Errorf("%d %s events for an invalid card, want 0", n, typ)
			}
		}
		r := cur.BlockReason
		if r == nil {
			t.Fatal("no block_reason")
		}
		if r.Kind != "invalid_input" || !strings.Contains(r.Where+r.What, "plan") || !strings.Contains(r.How, "drover card resume "+c.Identifier) {
			t.Errorf("block_reason %+v; want invalid_input naming plan and the resume command", r)
		}

		e.ok("card", "edit", c.Identifier, "--spec", `{"plan":"write the thing"}`)
		e.ok("card", "resume", c.Identifier)
		eventually(t, 15*time.Second, c.Identifier+" runs and succeeds", func() bool { return e.card(c.Identifier).State == "review" })
		if n := len(e.starts()); n != 1 {
			t.Errorf("%d agent processes after the fix, want 1", n)
		}
		rs := e.runs(c.Identifier)
		if len(rs) != 1 || rs[0].Outcome != "succeeded" || rs[0].Attempt != 1 {
			t.Errorf("runs after resume %+v; want one succeeded attempt 1", rs)
		}
	})
}

// rate_limited with a reset time defers the card until then, not counted.
func TestRateLimitedDefersUntilTheReset(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		e := newEnv(t, wf{Default: "sim"}, "", backend)
		c := e.addCard("limited", "--spec", `{"sim":["rate_limited","succeeded"],"sim_reset":"2s","sim_delay":"20ms"}`)
		e.start()
		eventually(t, 20*time.Second, c.Identifier+" succeeds after the reset", func() bool { return e.card(c.Identifier).State == "review" })
		rs := e.runsInOrder(c.Identifier)
		if len(rs) != 2 {
			t.Fatalf("runs %+v; want a deferred run and a successful one", rs)
		}
		first, second := rs[0], rs[1]
		if first.Outcome != "deferred" || first.Kind != "rate_limited" || first.Counted {
			t.Errorf("first run: outcome %s kind %s counted %v; want deferred rate_limited, not counted", first.Outcome, first.Kind, first.Counted)
		}
		if second.Outcome != "succeeded" {
			t.Errorf("second run: %s", second.Outcome)
		}
		// The sim's reset is 2s after its run; the retry must not come sooner
		// than the reset (the 100ms-300ms backoff would be much sooner).
		if gap := second.ClaimedAt.Sub(*first.FinishedAt); gap < 1500*time.Millisecond {
			t.Errorf("the retry came %v after a rate limit that resets in 2s", gap)
		}
		deferred := eventsOfType(e.events(c.Identifier), "deferred")
		if len(deferred) != 1 {
			t.Errorf("%d deferred events, want 1", len(deferred))
		}
	})
}

// Five cards failing with provider_unavailable inside the window open the
// profile's breaker; none is blocked; after the cooldown one probe succeeds
// and dispatch resumes.
func TestProviderOutageOpensTheBreaker(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		w := wf{Default: "sim", MaxConcurrent: 5, Policy: "  breaker: {threshold: 5, window: 1m, cooldown: 3s}\n"}
		e := newEnv(t, w, "", backend)
		var cs []card
		for i := 0; i < 5; i++ {
			cs = append(cs, e.addCard(fmt.Sprintf("outage %d", i), "--spec", `{"sim":["provider_unavailable","succeeded"],"sim_delay":"200ms"}`))
		}
		e.start()
		// The breaker's transitions are in the audit log; agent ls shows it
		// open while it is (checked when we are still inside the cooldown).
		var until time.Time
		eventually(t, 20*time.Second, "an agent_open event for sim", func() bool {
			var evs []event
			e.jsonOf(&evs, "events")
			for _, ev := range evs {
				var data struct {
					Agent string     `json:"agent"`
					Until *time.Time `json:"until"`
				}
				_ = json.Unmarshal(ev.Data, &data)
				if ev.Type == "agent_open" && data.Agent == "sim" && data.Until != nil {
					until = *data.Until
					return true
				}
			}
			return false
		})
		if a := e.agents()["sim"]; time.Until(until) > 500*time.Millisecond && a.State != "open" {
			t.Errorf("agent ls shows sim %s (%s) inside its open window (until %v)", a.State, a.Reason, until)
		} else {
			t.Logf("agent ls: sim %s until %v", a.State, a.Until)
		}
		late := e.addCard("healthy, added during the outage", "--spec", `{"sim":["succeeded"],"sim_delay":"20ms"}`)
		all := append(cs, late)
		for _, c := range all {
			eventually(t, 30*time.Second, c.Identifier+" succeeds after the outage", func() bool {
				st := e.card(c.Identifier).State
				if st == "blocked" {
					t.Fatalf("%s was blocked by a provider outage", c.Identifier)
				}
				return st == "review"
			})
		}
		// While open, nothing of the profile starts: not even a healthy card.
		if lr := e.runs(late.Identifier); len(lr) == 0 || lr[0].ClaimedAt.Before(until.Add(-50*time.Millisecond)) {
			t.Errorf("%s runs %+v; the breaker was open until %v", late.Identifier, lr, until)
		}
		if a := e.agents()["sim"]; a.State != "closed" {
			t.Errorf("after the probe succeeded the breaker is %s (%s), want closed", a.State, a.Reason)
		}
		for _, c := range cs {
			for _, r := range e.runs(c.Identifier) {
				if r.Counted {
					t.Errorf("%s run %d (%s) counted toward max_attempts", c.Identifier, r.Attempt, r.Kind)
				}
			}
		}
		// The first run after the cooldown is one probe: between the last
		// outage run and the next start, exactly one run started alone.
		var starts []run
		for _, c := range all {
			starts = append(starts, e.runs(c.Identifier)...)
		}
		var lastFail time.Time
		for _, r := range starts {
			if r.Kind == "provider_unavailable" && r.FinishedAt != nil && r.FinishedAt.After(lastFail) {
				lastFail = *r.FinishedAt
			}
		}
		var after []run
		for _, r := range starts {
			if r.ClaimedAt.After(lastFail) {
				after = append(after, r)
			}
		}
		if len(after) == 0 {
			t.Fatal("no run after the outage")
		}
		first := after[0]
		for _, r := range after {
			if r.ClaimedAt.Before(first.ClaimedAt) {
				first = r
			}
		}
		if d := first.ClaimedAt.Sub(lastFail); d < 2500*time.Millisecond {
			t.Errorf("first run after the breaker opened came %v after the last failure; cooldown is 3s", d)
		}
		for _, r := range after {
			if r.ID != first.ID && first.FinishedAt != nil && r.ClaimedAt.Before(*first.FinishedAt) {
				t.Errorf("run %s started beside the probe %s", r.ID, first.ID)
			}
		}
	})
}

// auth_failed pauses the profile once, notifies once and leaves the other
// cards untouched; agent resume lets them run.
func TestAuthFailedPausesTheProfile(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		h := testkit.NewReceiver(t)
		e := newEnv(t, wf{Default: "sim", MaxConcurrent: 1, Notify: notifyYAML(h)}, "", backend)
		a := e.addCard("bad key", "--spec", `{"sim":["auth_failed","succeeded"],"sim_delay":"20ms"}`)
		b := e.addCard("other one", "--spec", `{"sim":["succeeded"],"sim_delay":"20ms"}`)
		c := e.addCard("other two", "--spec", `{"sim":["succeeded"],"sim_delay":"20ms"}`)
		e.start()
		eventually(t, 15*time.Second, "agent ls shows sim paused", func() bool { return e.agents()["sim"].State == "paused" })
		eventually(t, 10*time.Second, "one profile_paused notification", func() bool { return mentioning(h, "profile_paused") >= 1 })
		time.Sleep(1 * time.Second) // several ticks: nothing else may happen
		if n := mentioning(h, "profile_paused"); n != 1 {
			t.Errorf("%d profile_paused notifications, want 1:\n%s", n, received(h))
		}
		for _, o := range []card{b, c} {
			cur := e.card(o.Identifier)
			if cur.State != "ready" || cur.Claim != nil || cur.BlockReason != nil {
				t.Errorf("%s: state %s claim %+v block %+v; want untouched in ready", o.Identifier, cur.State, cur.Claim, cur.BlockReason)
			}
			if rs := e.runs(o.Identifier); len(rs) != 0 {
				t.Errorf("%s has %d runs while the profile is paused", o.Identifier, len(rs))
			}
		}
		ra := e.runs(a.Identifier)
		if len(ra) != 1 || ra[0].Kind != "auth_failed" || ra[0].Counted {
			t.Errorf("runs of %s: %+v; want one uncounted auth_failed run", a.Identifier, ra)
		}
		if st := e.card(a.Identifier).State; st == "blocked" {
			t.Errorf("%s was blocked by a profile-level failure", a.Identifier)
		}
		if n := len(eventsOfType(e.events(a.Identifier), "blocked")); n != 0 {
			t.Errorf("%d blocked events on %s", n, a.Identifier)
		}

		e.ok("agent", "resume", "sim")
		for _, o := range []card{a, b, c} {
			eventually(t, 20*time.Second, o.Identifier+" runs after agent resume", func() bool { return e.card(o.Identifier).State == "review" })
		}
		if n := mentioning(h, "profile_paused"); n != 1 {
			t.Errorf("%d profile_paused notifications in all, want 1", n)
		}
	})
}

// max_attempts: -1 keeps retrying.
func TestUnboundedAttemptsKeepRetrying(t *testing.T) {
	t.Parallel()
	// The same failure every time would be blocked by the repeat cap
	// (truth_test.go); this test is about max_attempts alone.
	e := newEnv(t, wf{Default: "sim", Policy: "  max_attempts: -1\n  repeat_cap: -1\n"}, "", testkit.SQLite)
	c := e.addCard("forever", "--spec", `{"sim":["agent_failed"],"sim_delay":"10ms"}`)
	e.start()
	eventually(t, 40*time.Second, "more than 12 attempts", func() bool { return len(e.runs(c.Identifier)) > 12 })
	cur := e.card(c.Identifier)
	if cur.State == "blocked" || len(cur.GaveUp) > 0 && string(cur.GaveUp) != "null" {
		t.Errorf("an unbounded card gave up: state %s gave_up %s", cur.State, cur.GaveUp)
	}
	rs := e.runsInOrder(c.Identifier)
	for i, r := range rs {
		if r.Attempt != i+1 {
			t.Errorf("attempts %v are not 1, 2, 3 …", attempts(rs))
			break
		}
	}
}

// Bad policies are refused at start, naming the key, with exit code 2.
func TestServeRefusesBadPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, policy, columns, key string
	}{
		{"max_attempts 0", "  max_attempts: 0\n", "", "max_attempts"},
		{"failed_state missing", "  failed_state: stuck\n", "", "failed_state"},
		{"no blocked column", "", "    - {name: ready, role: eligible}\n    - {name: in_progress, role: running}\n    - {name: done, role: done}\n", `role "blocked"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, wf{Default: "sim", Policy: tc.policy, Columns: tc.columns}, "", testkit.SQLite)
			e.addCardMaybe()
			start := time.Now()
			out, errOut, code := e.drover(nil, "serve")
			if time.Since(start) > 10*time.Second {
				t.Errorf("serve took %v to refuse", time.Since(start))
			}
			if code != 2 {
				t.Fatalf("serve exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.key) {
				t.Errorf("error does not name %s: %s", tc.key, errOut)
			}
		})
	}
}

// addCardMaybe adds a card when the config loads (so a refusal is not just
// an empty board); it ignores a failure since the config may be invalid.
func (e *env) addCardMaybe() {
	e.drover(nil, "card", "add", "--title", "x", "--spec", `{"sim":["succeeded"]}`)
}

// Two cards hitting auth_failed at the same time still pause the profile
// once and notify once.
func TestConcurrentAuthFailuresNotifyOnce(t *testing.T) {
	t.Parallel()
	h := testkit.NewReceiver(t)
	e := newEnv(t, wf{Default: "sim", MaxConcurrent: 2, Notify: notifyYAML(h)}, "", testkit.SQLite)
	a := e.addCard("bad key 1", "--spec", `{"sim":["auth_failed"],"sim_delay":"200ms"}`)
	b := e.addCard("bad key 2", "--spec", `{"sim":["auth_failed"],"sim_delay":"200ms"}`)
	e.start()
	eventually(t, 15*time.Second, "both runs routed", func() bool {
		return len(e.runs(a.Identifier)) == 1 && len(e.runs(b.Identifier)) == 1 && e.runs(a.Identifier)[0].Outcome != "" && e.runs(b.Identifier)[0].Outcome != ""
	})
	eventually(t, 10*time.Second, "a profile_paused notification", func() bool { return mentioning(h, "profile_paused") >= 1 })
	time.Sleep(1500 * time.Millisecond)
	if n := mentioning(h, "profile_paused"); n != 1 {
		t.Errorf("%d profile_paused notifications, want 1:\n%s", n, received(h))
	}
	if e.agents()["sim"].State != "paused" {
		t.Errorf("sim is not paused")
	}
}
