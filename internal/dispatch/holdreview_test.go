package dispatch

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/testkit"
)

// A rate limit routed while a hold's probe is out opens the breaker for
// its own reason but keeps the hold: the next run failing with the hold's
// fingerprint is not counted against its card.
func TestRateLimitWhileHoldProbingKeepsTheHold(t *testing.T) {
	cfg := testkit.NewWorkflow().Config(t, t.TempDir())
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	env := routeEnv{cfg: cfg, now: now, node: "n1"}
	msg := "frobnicator quorum lost for shard DRV-9: standing by"
	fp := policy.Fingerprint(policy.KindUnknown, msg, 3)
	until := now.Add(-time.Second)
	held := policy.BreakerState{State: policy.BreakerHalfOpen, Kind: policy.KindUnknown, Until: &until, Fingerprint: fp,
		Shape: policy.NormalizeError(msg), Cards: []string{"DRV-7", "DRV-8", "DRV-9"}, ProbeCardID: "cP", ProbeCard: "DRV-7"}

	route := func(id string, bs policy.BreakerState, cls policy.Classification) routing {
		claim := board.Claim{Owner: "n1", Epoch: 5, LeaseUntil: now.Add(time.Minute)}
		card := board.Card{ID: id, Identifier: "DRV-" + id, State: "in_progress", Version: 5, Claim: &claim, RetryEpoch: 1}
		open := board.Run{ID: "r-" + id, CardID: id, Attempt: 1, RetryEpoch: 1, ClaimEpoch: 5, Node: "n1", Agent: "sim"}
		f := routeFacts{card: card, stored: open, history: []board.Run{open}, breakers: map[string]breaker{"sim": {bs, 4}}}
		req := routeReq{cardID: id, claim: claim, run: open, cls: cls, res: &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 3}}}
		w, err := decideRoute(env, req, f)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// A long run of another card, started before the hold, ends rate limited.
	w := route("c1", held, policy.Classification{Kind: policy.KindRateLimited, Message: "429", Source: "test"})
	if w.ch.AgentState == nil {
		t.Fatalf("no breaker write")
	}
	var after policy.BreakerState
	_ = json.Unmarshal(w.ch.AgentState.Data, &after)
	t.Logf("breaker after the rate limit: state %s fingerprint %q", after.State, after.Fingerprint)
	// Then a card fails with the hold's failure.
	w = route("c2", after, policy.Classification{Kind: policy.KindUnknown, Message: msg, Source: "test"})
	if w.run.Fingerprint != fp {
		t.Fatalf("fingerprint %s, want %s", w.run.Fingerprint, fp)
	}
	if w.run.Counted {
		t.Errorf("the hold's failure was counted (%s): the rate limit during the probe dropped the hold (breaker %s, fingerprint %q)", w.run.Decision, after.State, after.Fingerprint)
	}
}

// Three cards that fail alike (a card-specific failure whose text happens
// to be the same) hold the profile; a failed probe waits a cooldown longer
// than the others, so the next probe is another card, and a success
// releases the hold: the cards that would succeed run.
func TestHoldProbesRotateAndASuccessReleases(t *testing.T) {
	w := newWorldFrom(t, worldWorkflow(10).Set("dispatch", "{node: n1, lease: 3s, poll_interval: 100ms, max_concurrent: 3}"))
	var bad []board.Card
	for i := 0; i < 3; i++ {
		bad = append(bad, w.add("fails alike", "sim", `{"sim":["unknown"],"sim_delay":"1ms"}`))
	}
	var good []board.Card
	for i := 0; i < 3; i++ {
		good = append(good, w.add("would succeed", "sim", `{"sim":["succeeded"],"sim_delay":"1ms"}`))
	}
	stop := w.run(w.dispatcher("n1"))
	time.Sleep(6 * time.Second)
	stop()
	for _, c := range append(bad, good...) {
		rs := w.runs(c.ID)
		cur, _ := w.st.GetCard(t.Context(), c.ID)
		t.Logf("%s %s: %d runs %s", c.Identifier, cur.State, len(rs), attempts(rs))
		for _, r := range rs {
			t.Logf("   attempt %d counted=%v fp=%s", r.Attempt, r.Counted, r.Fingerprint)
		}
	}
	as, _ := w.st.ListAgentStates(t.Context())
	for _, a := range as {
		t.Logf("agent %s %s: %s", a.Name, a.State, a.Reason)
	}
	for _, c := range good {
		if len(w.runs(c.ID)) == 0 {
			t.Errorf("%s never ran: the held profile's probe is always %s", c.Identifier, bad[0].Identifier)
		}
	}
}

// Two nodes route at once (no shared lock): Y decides "counted" on the
// breaker as read (closed, no hold yet) and commits while X, which read
// the peers before Y's run was written, opens the hold. X's uncount is a
// predicate applied in its own transaction, so it covers Y's run.
func TestHoldRaceUncountsTheRacingRun(t *testing.T) {
	w := newWorld(t, 10)
	ctx := t.Context()
	d := w.dispatcher("n1")
	var cs []board.Card
	for i := 0; i < 4; i++ {
		cs = append(cs, w.claimNoRun(d, w.add("c", "sim", `{"sim":["unknown"]}`)))
	}
	msg := "frobnicator quorum lost: standing by"
	req := func(c board.Card) routeReq {
		rs := w.runs(c.ID)
		return routeReq{cardID: c.ID, claim: *c.Claim, run: rs[0], res: &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 3}},
			cls: policy.Classification{Kind: policy.KindUnknown, Message: msg, Source: "test"}}
	}
	read := func(r routeReq) routeFacts {
		f, err := readRoute(ctx, w.st, w.cfg.Policy, r, d.routes.env().now)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	apply := func(r routeReq, f routeFacts) routing {
		rt, err := decideRoute(d.routes.env(), r, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.st.Apply(ctx, rt.ch); err != nil {
			t.Fatalf("apply %s: %v", r.cardID, err)
		}
		return rt
	}
	W, V, X, Y := req(cs[0]), req(cs[1]), req(cs[2]), req(cs[3])
	apply(W, read(W))
	fY := read(Y) // node 2 reads: one peer
	apply(V, read(V))
	fX := read(X)      // node 1 reads: two peers: X opens the hold
	yr := apply(Y, fY) // node 2 commits first: counted, guard on "no row" passes
	xr := apply(X, fX) // node 1 commits the hold
	t.Logf("Y: counted=%v path=%s; X: path=%s uncount=%v", yr.run.Counted, yr.path, xr.path, xr.ch.Uncount)
	for _, r := range w.runs(cs[3].ID) {
		if r.Counted && r.Fingerprint == xr.run.Fingerprint {
			t.Errorf("run %s of %s stays counted with the fingerprint its profile is held for", r.ID, cs[3].Identifier)
		}
	}
}

// A recovered run of a profile with a verify step: its log says the agent
// exited 1, but the agent had reported drover_done. Its checks never ran,
// so it is not done.
func TestRecoveredDoneWithoutVerifyIsNotDone(t *testing.T) {
	cfg := testkit.NewWorkflow().Set("verify", "{commands: [\"false\"]}").Config(t, t.TempDir())
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	env := routeEnv{cfg: cfg, now: now, node: "n2"}
	claim := board.Claim{Owner: "n1", Epoch: 5, LeaseUntil: now.Add(-time.Minute)}
	card := board.Card{ID: "c1", Identifier: "DRV-1", State: "in_progress", Version: 5, Claim: &claim, RetryEpoch: 1}
	open := board.Run{ID: "r1", CardID: "c1", Attempt: 1, RetryEpoch: 1, ClaimEpoch: 5, Node: "n1", Agent: "sim",
		Report: &board.AgentReport{Kind: board.ReportDone, Summary: "all done"}}
	fromLog := policy.Classification{Kind: policy.KindAgentFailed, Message: "exit 1", Source: "exit_code:1"}
	if len(cfg.VerifyFor("sim").Commands) == 0 {
		t.Fatal("no verify step configured")
	}
	req := routeReq{cardID: "c1", claim: claim, run: open, cls: unverified(fromLog, open.Report), recovering: true}
	f := routeFacts{card: card, stored: open, history: []board.Run{open}, breakers: map[string]breaker{}}
	w, err := decideRoute(env, req, f)
	if err != nil {
		t.Fatal(err)
	}
	if w.run.Outcome == board.OutcomeSucceeded {
		t.Errorf("a recovered run whose checks never ran is %s/%s, in %s: %s", w.run.Outcome, w.run.Kind, w.next.State, w.run.Decision)
	}
}
