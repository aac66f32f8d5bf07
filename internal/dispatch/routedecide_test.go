package dispatch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestDecideRoute is the routing decision without a store: for each case,
// the change it would write (card, run, events, comments, breaker) and the
// notifications it would queue.
func TestDecideRoute(t *testing.T) {
	cfg := testkit.NewWorkflow().Set("policy", "{max_attempts: 2, breaker: {threshold: 1}}").
		Set("limits", "{max_cost_per_card_usd: 1}").Config(t, t.TempDir())
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	env := routeEnv{cfg: cfg, now: now, node: "n1"}
	claim := board.Claim{Owner: "n1", Epoch: 7, LeaseUntil: now.Add(time.Minute)}
	card := board.Card{ID: "c1", Identifier: "DRV-1", State: "in_progress", Version: 7, Claim: &claim, RetryEpoch: 1}
	open := board.Run{ID: "r2", CardID: "c1", Attempt: 2, RetryEpoch: 1, ClaimEpoch: 7, Node: "n1", Agent: "sim", Workspace: "/ws/DRV-1"}
	failed := board.Run{ID: "r1", CardID: "c1", Attempt: 1, RetryEpoch: 1, Agent: "sim", Outcome: board.OutcomeFailed, Kind: "agent_failed", Counted: true}
	exit := func(code int) *agent.Result {
		return &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: code}}
	}
	cls := func(k policy.Kind, msg string) policy.Classification {
		return policy.Classification{Kind: k, Message: msg, Source: "test"}
	}
	facts := func(mod func(*routeFacts)) routeFacts {
		f := routeFacts{card: card, stored: open, history: []board.Run{failed, open}, breakers: map[string]breaker{}}
		if mod != nil {
			mod(&f)
		}
		return f
	}
	req := routeReq{cardID: "c1", claim: claim, run: open, cls: cls(policy.KindSucceeded, ""), res: exit(0)}

	type want struct {
		err      error
		lost     bool
		state    string // the card's next column ("" when the card is not written)
		outcome  board.Outcome
		kind     string
		events   []string
		comments []string // a prefix of each comment's body
		notices  []string
		breaker  string // the breaker state written ("" none)
		leaseEnd bool
	}
	cases := []struct {
		name string
		req  func(routeReq) routeReq
		f    routeFacts
		want want
	}{
		{"success completes into review", nil, facts(nil),
			want{state: "review", outcome: board.OutcomeSucceeded, kind: "succeeded", events: []string{board.EvFinished}}},
		{"a lost claim whose run its recovery routed writes nothing", nil, facts(func(f *routeFacts) {
			f.card.Claim, f.stored.Outcome = &board.Claim{Owner: "n2", Epoch: 9}, board.OutcomeInterrupted
		}), want{err: errRouted}},
		{"a lost claim writes only the run", nil, facts(func(f *routeFacts) { f.card.Claim = &board.Claim{Owner: "n2", Epoch: 9} }),
			want{lost: true, outcome: board.OutcomeLeaseLost, kind: "succeeded", events: []string{board.EvLeaseLost}}},
		{"the last counted attempt gives up",
			func(r routeReq) routeReq {
				r.cls, r.res = cls(policy.KindAgentFailed, "tests failed"), exit(1)
				return r
			}, facts(nil),
			want{state: "blocked", outcome: board.OutcomeFailed, kind: "agent_failed", events: []string{board.EvGaveUp},
				comments: []string{"Blocked (agent_failed)"}, notices: []string{policy.NotifyGaveUp}}},
		{"a question parks with the question kept",
			func(r routeReq) routeReq {
				r.cls = policy.Classification{Kind: policy.KindInputRequired, Question: "which branch?", Source: "test"}
				return r
			}, facts(nil),
			want{state: "awaiting_input", outcome: board.OutcomeParked, kind: "input_required", events: []string{board.EvParked},
				comments: []string{"Question: which branch?"}, notices: []string{policy.NotifyParked}}},
		{"a rate limit opens the breaker at threshold 1",
			func(r routeReq) routeReq { r.cls, r.res = cls(policy.KindRateLimited, "429"), exit(1); return r }, facts(nil),
			want{state: "ready", outcome: board.OutcomeDeferred, kind: "rate_limited", events: []string{board.EvDeferred, "agent_open"},
				notices: []string{policy.NotifyProfilePaused}, breaker: policy.BreakerOpen}},
		{"the agent's own block decides",
			nil, facts(func(f *routeFacts) {
				f.stored.Report = &board.AgentReport{Kind: board.ReportBlock, What: "the API key in the spec is a placeholder", Where: "spec.key", How: "set it"}
			}),
			want{state: "blocked", outcome: board.OutcomeBlocked, kind: "agent_blocked", events: []string{board.EvBlocked},
				comments: []string{"Blocked (agent_blocked)\n\nWhat: the API key in the spec is a placeholder"}, notices: []string{policy.NotifyBlocked}}},
		{"a run stopped for spend blocks with the epoch's cost",
			func(r routeReq) routeReq {
				r.res = &agent.Result{Signals: policy.Signals{ExitCode: -1, Signaled: true, KilledFor: "spend",
					Structured: policy.Structured{CostUSD: 0.8, CostKnown: true}}}
				r.cls = cls(policy.KindSpendLimit, "spend")
				return r
			}, facts(func(f *routeFacts) { f.history[0].CostUSD = 0.5 }),
			want{state: "blocked", outcome: board.OutcomeBlocked, kind: "spend_limit", events: []string{board.EvBlocked},
				comments: []string{"Blocked (spend_limit)"}, notices: []string{policy.NotifyBlocked}}},
		{"a recovery waits while the owner's lease lives",
			func(r routeReq) routeReq {
				r.claim.Owner, r.recovering, r.res = "n2", true, nil
				r.cls = cls(policy.KindInterrupted, "lease expired")
				return r
			}, facts(func(f *routeFacts) {
				f.card.Claim = &board.Claim{Owner: "n2", Epoch: 7, LeaseUntil: now.Add(time.Second)}
			}),
			want{err: errRenewed}},
		{"a recovery of an expired lease retries at once",
			func(r routeReq) routeReq {
				r.claim = board.Claim{Owner: "n2", Epoch: 7, LeaseUntil: now.Add(-time.Second)}
				r.recovering, r.res, r.cls = true, nil, cls(policy.KindInterrupted, "lease expired")
				return r
			}, facts(func(f *routeFacts) {
				f.card.Claim = &board.Claim{Owner: "n2", Epoch: 7, LeaseUntil: now.Add(-time.Second)}
			}),
			want{state: "ready", outcome: board.OutcomeInterrupted, kind: "interrupted", events: []string{board.EvRetry}, leaseEnd: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := req
			if c.req != nil {
				r = c.req(r)
			}
			got, err := decideRoute(env, r, c.f)
			if c.want.err != nil || err != nil {
				if !errors.Is(err, c.want.err) {
					t.Fatalf("err = %v, want %v", err, c.want.err)
				}
				return
			}
			checkRouting(t, got, c.want.lost, c.want.state, c.want.outcome, c.want.kind, c.want.events, c.want.comments, c.want.notices, c.want.breaker)
			if got.ch.Run == nil || got.ch.Run.FinishedAt == nil || !got.ch.Run.FinishedAt.Equal(now) || !got.ch.RunMustBeOpen {
				t.Errorf("run written %+v (must be open: %v); want it finished at %s, guarded", got.ch.Run, got.ch.RunMustBeOpen, now)
			}
			if (got.ch.LeaseEndedBy != nil) != c.want.leaseEnd {
				t.Errorf("lease-ended guard %v, want %v", got.ch.LeaseEndedBy, c.want.leaseEnd)
			}
			if !c.want.lost && (got.ch.ClaimGuard == nil || *got.ch.ClaimGuard != r.claim || got.ch.Card.Claim != nil) {
				t.Errorf("claim guard %+v, next claim %+v; want the run's claim guarded and cleared", got.ch.ClaimGuard, got.ch.Card.Claim)
			}
		})
	}
}

func checkRouting(t *testing.T, got routing, lost bool, state string, outcome board.Outcome, kind string, events, comments, notices []string, breakerState string) {
	t.Helper()
	if got.lost != lost {
		t.Errorf("lost = %v, want %v", got.lost, lost)
	}
	switch {
	case lost && got.ch.Card != nil:
		t.Errorf("a lost claim writes the card: %+v", got.ch.Card)
	case !lost && (got.ch.Card == nil || got.ch.Card.State != state):
		t.Errorf("card written %+v, want it in %s", got.ch.Card, state)
	}
	if got.ch.Run.Outcome != outcome || got.ch.Run.Kind != kind {
		t.Errorf("run outcome %s kind %s, want %s %s", got.ch.Run.Outcome, got.ch.Run.Kind, outcome, kind)
	}
	var evs []string
	for _, e := range got.ch.Events {
		evs = append(evs, e.Type)
	}
	if strings.Join(evs, ",") != strings.Join(events, ",") {
		t.Errorf("events %v, want %v", evs, events)
	}
	if len(got.ch.Comments) != len(comments) {
		t.Errorf("comments %+v, want %d", got.ch.Comments, len(comments))
	}
	for i, c := range got.ch.Comments {
		if i < len(comments) && !strings.HasPrefix(c.Body, comments[i]) {
			t.Errorf("comment %d = %q, want it to start %q", i, c.Body, comments[i])
		}
	}
	var ns []string
	for _, n := range got.notices {
		ns = append(ns, n.Event)
	}
	if strings.Join(ns, ",") != strings.Join(notices, ",") {
		t.Errorf("notices %v, want %v", ns, notices)
	}
	switch {
	case breakerState == "" && got.ch.AgentState != nil:
		t.Errorf("breaker written %+v, want none", got.ch.AgentState)
	case breakerState != "" && (got.ch.AgentState == nil || got.ch.AgentState.State != breakerState):
		t.Errorf("breaker written %+v, want %s", got.ch.AgentState, breakerState)
	}
}
