package policy

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

func TestBudgets(t *testing.T) {
	h := hist(KindAgentFailed, KindNetwork, KindAgentFailed, KindNetwork)
	h = h[:len(h)-1] // routed runs only
	got := map[string]BudgetLine{}
	for _, l := range Budgets(Defaults(), h) {
		got[l.Name] = l
	}
	if l := got["policy.max_attempts"]; l != (BudgetLine{"policy.max_attempts", 2, 10, 8}) {
		t.Errorf("max_attempts %+v", l)
	}
	if l := got["policy.kinds.network.cap"]; l.Used != 2 || l.Left != 1 {
		t.Errorf("network %+v", l)
	}
	cfg := Defaults()
	cfg.MaxAttempts = -1
	if l := Budgets(cfg, h)[0]; l.Limit != -1 || l.Left != -1 {
		t.Errorf("unbounded %+v", l)
	}
	rel := []board.Run{{Outcome: board.OutcomeFailed}, {Outcome: board.OutcomeReleased}, {Outcome: board.OutcomeReleased}}
	for _, l := range Budgets(Defaults(), rel) {
		if l.Name == "policy.release_churn_cap" && (l.Used != 2 || l.Left != 3) {
			t.Errorf("churn %+v", l)
		}
	}
	if s := RenderBudgets(Budgets(cfg, h)); !strings.Contains(s, "unbounded") || !strings.Contains(s, "policy.kinds.network.cap") {
		t.Errorf("render:\n%s", s)
	}
}

func TestShowPolicy(t *testing.T) {
	rows := map[Kind]PolicyRow{}
	for _, r := range ShowPolicy(Defaults()) {
		rows[r.Kind] = r
	}
	if len(rows) != len(Kinds) {
		t.Fatalf("%d rows", len(rows))
	}
	want := map[Kind]string{
		KindAgentFailed:         "10s 20s 40s 1m20s 2m40s 5m 5m 5m 5m",
		KindNetwork:             "1m 5m 15m",
		KindInterrupted:         "now now now",
		KindRateLimited:         "10s 20s 40s 1m20s 2m40s",
		KindProviderUnavailable: "10s 20s 40s 1m20s 2m40s 5m 5m 5m 5m 5m",
		KindUsageLimited:        "10s 20s 40s 1m20s 2m40s 5m 5m 5m 5m 5m …",
		KindInvalidInput:        "",
		KindAuthFailed:          "",
	}
	for k, w := range want {
		if got := strings.Join(rows[k].Schedule, " "); got != w {
			t.Errorf("%s schedule %q, want %q", k, got, w)
		}
	}
	if r := rows[KindAuthFailed]; r.Verb != "pause_profile_and_defer" || r.Counts {
		t.Errorf("auth_failed %+v", r)
	}
	cfg := Defaults()
	cfg.MaxAttempts = -1
	for _, r := range ShowPolicy(cfg) {
		if r.Kind == KindAgentFailed && r.Schedule[len(r.Schedule)-1] != "…" {
			t.Errorf("unbounded schedule must be open-ended: %v", r.Schedule)
		}
	}
	out := RenderPolicy(Defaults())
	for _, s := range []string{"max_attempts: 10", "failed_state: blocked", "network", "1m 5m 15m, then give up", "pause_profile_and_defer"} {
		if !strings.Contains(out, s) {
			t.Errorf("policy show lacks %q:\n%s", s, out)
		}
	}
}

func TestSpendDecision(t *testing.T) {
	cases := []struct {
		lim                 SpendLimits
		today, flight, card float64
		pause, block        bool
		reasonHas           string
	}{
		{SpendLimits{}, 1e6, 1e6, 1e6, false, false, ""},
		{SpendLimits{PerDay: 10}, 8, 1.99, 0, false, false, ""},
		{SpendLimits{PerDay: 10}, 8, 2, 0, true, false, "limits.max_cost_per_day_usd: $10.00 spent today ($8.00 finished + $2.00 in flight) of $10.00"},
		{SpendLimits{PerCard: 5}, 0, 0, 5.2, false, true, "limits.max_cost_per_card_usd: the card has spent $5.20 of $5.00"},
		{SpendLimits{PerDay: 1, PerCard: 1}, 2, 0, 2, true, true, "; limits.max_cost_per_card_usd"},
	}
	for i, c := range cases {
		p, b, r := SpendDecision(c.lim, c.today, c.flight, c.card)
		if p != c.pause || b != c.block || (c.reasonHas == "") != (r == "") || !strings.Contains(r, c.reasonHas) {
			t.Errorf("case %d: %v %v %q", i, p, b, r)
		}
	}
	d := SpendBlock(board.Card{Identifier: "DRV-9"}, SpendLimits{PerCard: 5}, 5.5, "r3", "blocked")
	if d.Verb != VerbBlock || d.NextState != "blocked" || !strings.Contains(d.BlockReason.How, "drover card resume DRV-9") || !strings.Contains(d.BlockReason.Where, "r3") {
		t.Errorf("%+v", d)
	}
}
