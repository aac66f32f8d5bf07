package policy

import (
	"math"
	"strings"
	"testing"
	"time"

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

func TestDayBudget(t *testing.T) {
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	next := day.Add(24 * time.Hour)
	done := func(cost float64) board.Run {
		return board.Run{Outcome: board.OutcomeSucceeded, CostUSD: cost, ClaimedAt: day.Add(time.Minute)}
	}
	open := func(live float64, at time.Time) board.Run { return board.Run{CostUSD: live, ClaimedAt: at} }
	today := day.Add(time.Hour)
	cases := []struct {
		name               string
		capUSD, cfg, sp    float64
		open, newest       []board.Run
		reserved, estimate float64
		reasonHas          string
		capped             bool
	}{
		{"no cap", 0, 0, 1e6, []board.Run{open(0, today)}, nil, 0, 0, "", false},
		{"first run of a fresh store", 0.25, 0, 0, nil, nil, 0, 0, "", false},
		{"unknown estimate: one at a time", 0.25, 0, 0, []board.Run{open(0, today)}, nil, 0, 0, "one at a time", false},
		{"recent average reserves", 0.25, 0, 0.1, []board.Run{open(0, today)}, []board.Run{done(0.1)}, 0.1, 0.1, "would pass the cap", true},
		{"runs that report no cost reserve nothing", 0.25, 0, 0, []board.Run{open(0, today), open(0, today)}, []board.Run{done(0)}, 0, 0, "", false},
		{"it fits", 0.25, 0, 0.05, []board.Run{open(0, today)}, []board.Run{done(0.1)}, 0.1, 0.1, "", false},
		{"live cost counts once", 0.25, 0, 0.05, []board.Run{open(0.04, today)}, []board.Run{done(0.1)}, 0.06, 0.1, "", false},
		{"config wins", 0.25, 0.2, 0.1, nil, []board.Run{done(0.01)}, 0, 0.2, "estimated $0.20, config", true},
		{"the day's first run may start whatever its estimate", 0.25, 0.3, 0, nil, nil, 0, 0.3, "", false},
		{"an expensive run after some spend", 0.25, 0.3, 0.01, nil, nil, 0, 0.3, "would pass", true},
		{"yesterday's run reserves nothing", 0.25, 0.1, 0, []board.Run{open(0, day.Add(-time.Hour))}, nil, 0, 0.1, "", false},
		{"reached", 0.25, 0.1, 0.25, nil, nil, 0, 0.1, "$0.25 spent today + $0.00 reserved", true},
	}
	for _, c := range cases {
		b := NewDayBudget(c.capUSD, c.cfg, c.sp, day, c.open, c.newest)
		why := b.Paused(next)
		if math.Abs(b.ReservedUSD-c.reserved) > 1e-9 || math.Abs(b.EstimateUSD-c.estimate) > 1e-9 ||
			(c.reasonHas == "") != (why == "") || !strings.Contains(why, c.reasonHas) || b.Capped() != c.capped {
			t.Errorf("%s: reserved %v estimate %v capped %v why %q", c.name, b.ReservedUSD, b.EstimateUSD, b.Capped(), why)
		}
		if c.capped && !strings.Contains(why, "next spend day at 2026-01-03 00:00 UTC") {
			t.Errorf("%s: the reason must name the next spend day: %q", c.name, why)
		}
	}
	b := NewDayBudget(0.25, 0.1, 0, day, nil, nil)
	for range 2 {
		if why := b.Paused(next); why != "" {
			t.Fatalf("$%.2f reserved of $0.25 must leave room for one more $0.10 run: %s", b.ReservedUSD, why)
		}
		b.Reserve()
	}
	if !b.Capped() {
		t.Fatalf("two $0.10 runs reserved of $0.25: a third would pass the cap, %+v", b)
	}
	d := SpendBlock(board.Card{Identifier: "DRV-9"}, SpendLimits{PerCard: 5}, 5.5, "r3", "blocked")
	if d.Verb != VerbBlock || d.NextState != "blocked" || !strings.Contains(d.BlockReason.How, "drover card resume DRV-9") || !strings.Contains(d.BlockReason.Where, "r3") {
		t.Errorf("%+v", d)
	}
}
