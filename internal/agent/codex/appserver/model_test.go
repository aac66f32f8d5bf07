package appserver

import (
	"testing"

	"github.com/drover-dev/drover/internal/agent"
)

// TestModelSettingsSent: the profile's model and service_tier go with
// thread/start (and thread/resume), its reasoning_effort with every
// turn/start; a profile without them sends none, so Codex's own
// configuration decides.
func TestModelSettingsSent(t *testing.T) {
	type params struct {
		Model       *string `json:"model"`
		ServiceTier *string `json:"serviceTier"`
		Effort      *string `json:"effort"`
	}
	set := func(p *agent.Profile) { p.Model, p.ReasoningEffort, p.ServiceTier = "gpt-5", "high", "priority" }
	r := runFake(t, fakeScript{Turns: [][]fakeStep{{msg("ok")}}}, runOpts{profile: set})
	var ts, tu params
	r.param(t, "thread/start", &ts)
	r.param(t, "turn/start", &tu)
	if ts.Model == nil || *ts.Model != "gpt-5" || ts.ServiceTier == nil || *ts.ServiceTier != "priority" || tu.Effort == nil || *tu.Effort != "high" {
		t.Errorf("thread/start %+v, turn/start %+v", ts, tu)
	}

	r = runFake(t, fakeScript{Turns: [][]fakeStep{{msg("ok")}}}, runOpts{profile: set, inv: func(inv *agent.Invocation) { inv.ResumeSession = "thr-parked" }})
	var tr params
	r.param(t, "thread/resume", &tr)
	if tr.Model == nil || *tr.Model != "gpt-5" || tr.ServiceTier == nil || *tr.ServiceTier != "priority" {
		t.Errorf("thread/resume %+v", tr)
	}

	r = runFake(t, fakeScript{Turns: [][]fakeStep{{msg("ok")}}}, runOpts{})
	var none, noneTurn params
	r.param(t, "thread/start", &none)
	r.param(t, "turn/start", &noneTurn)
	if none.Model != nil || none.ServiceTier != nil || noneTurn.Effort != nil {
		t.Errorf("without the keys: thread/start %+v, turn/start %+v", none, noneTurn)
	}
}
