package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// breaker is a profile's breaker as stored, with the version that guards
// its next write.
type breaker struct {
	policy.BreakerState
	version int64
}

// readBreakers loads every profile's breaker state: the one decoding of the
// stored rows, for dispatch, routing and explain alike. A closed breaker
// keeps its hits (they count toward opening it again).
func readBreakers(ctx context.Context, st store.Store) (map[string]breaker, error) {
	states, err := st.ListAgentStates(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]breaker{}
	for _, a := range states {
		var bs policy.BreakerState
		if len(a.Data) > 0 {
			_ = json.Unmarshal(a.Data, &bs)
		}
		if a.State == policy.BreakerClosed {
			bs = policy.BreakerState{State: policy.BreakerClosed, Hits: bs.Hits}
		}
		out[a.Name] = breaker{bs, a.Version}
	}
	return out, nil
}

// outage reports whether profile's breaker is open or probing for
// provider_unavailable: the provider is failing for other cards too, so a
// give-up must not blame the card.
func outage(bs map[string]breaker, profile string) bool {
	st := bs[profile].BreakerState
	return (st.State == policy.BreakerOpen || st.State == policy.BreakerHalfOpen) && st.Kind == policy.KindProviderUnavailable
}

// breakerWrite is what a routing does to its profile's breaker: the state
// to store (nil: unchanged), and an event and a notification when the
// breaker changed state.
type breakerWrite struct {
	state   *store.AgentState
	events  []board.Event
	notices []Notice
}

// breakerChange is what a profile-level failure (or a probe's result) does
// to the profile's breaker, written in the same transaction as the routing.
// A hold (the same failure across cards) opens it with the fingerprint, and
// its probe failing alike holds it again; any other outcome of the probe
// releases it.
func breakerChange(env routeEnv, bs map[string]breaker, fin board.Run, card policy.CardRef, cls policy.Classification, dec policy.Decision, hold *policy.Hold) breakerWrite {
	now, cfg, profile := env.now, env.cfg, fin.Agent
	was := bs[profile]
	st := was.BreakerState
	before, _ := json.Marshal(st)
	retryAt := cls.RetryAt
	if retryAt.IsZero() && cls.RetryAfter > 0 {
		retryAt = now.Add(cls.RetryAfter)
	}
	profileLevel := policy.Spec(dec.Kind).ProfileLevel()
	switch {
	case st.Fingerprint != "" && dec.Kind == policy.KindSucceeded && st.State != policy.BreakerPaused:
		// Any success of a held profile (a run that was live, the probe)
		// shows the fault is gone.
		st = policy.ProbeResult(cfg.Policy, st, true, now)
	case hold != nil && hold.New:
		st = policy.OpenHold(cfg.Policy, *hold, cls.Kind, policy.NormalizeError(cls.Message), fin.ID, now)
	case hold != nil && hold.Probe:
		st = policy.HoldAgain(cfg.Policy, st, card, now)
	case st.State == policy.BreakerHalfOpen && st.ProbeCardID == card.ID && policy.ProbesCredit(cfg.Policy, dec.Kind) && st.Kind == dec.Kind:
		st = policy.CreditProbeFailed(cfg.Policy, st, card, now)
	case st.State == policy.BreakerHalfOpen && st.ProbeCardID == card.ID:
		st = policy.ProbeResult(cfg.Policy, st, !profileLevel, now)
	}
	if profileLevel {
		st, _ = policy.Observe(cfg.Policy, st, dec.Kind, card, now, retryAt)
	}
	if p := dec.PauseProfile; p != nil && st.State != policy.BreakerPaused && p.Until == nil {
		st = policy.BreakerState{State: policy.BreakerPaused, Kind: p.Kind, Reason: p.Reason, Since: &now}
	}
	if after, _ := json.Marshal(st); string(before) == string(after) {
		return breakerWrite{}
	}
	w := breakerWrite{state: agentState(profile, st, was.version, now)}
	if st.State == was.State {
		return w
	}
	text := fmt.Sprintf("agent profile %s is %s: %s", profile, st.State, st.Reason)
	data := map[string]any{"agent": profile, "until": st.Until}
	if st.Fingerprint != "" {
		data["fingerprint"], data["example_run"], data["cards"] = st.Fingerprint, st.Example, st.Cards
	}
	w.events = []board.Event{{At: now, Type: "agent_" + st.State, Actor: actorOf(env.node), Reason: text, Data: jsonOf(data)}}
	// A hold is told once: not again each time its probe fails alike.
	again := st.Fingerprint != "" && st.Fingerprint == was.Fingerprint ||
		st.FailedProbes > was.FailedProbes && st.Kind == was.Kind // a probe found the credit still spent
	if (st.State == policy.BreakerPaused || st.State == policy.BreakerOpen) && !again {
		w.notices = []Notice{{Event: policy.NotifyProfilePaused, Key: "agent/" + profile + "/" + now.Format(time.RFC3339Nano) + "/" + st.State,
			Profile: profile, Text: text, At: now}}
	}
	return w
}

// agentState is the stored form of a breaker; version guards the write.
func agentState(profile string, st policy.BreakerState, version int64, now time.Time) *store.AgentState {
	data, _ := json.Marshal(st)
	state := st.State
	if state == "" {
		state = policy.BreakerClosed
	}
	return &store.AgentState{Name: profile, State: state, Kind: string(st.Kind), Reason: st.Reason, Until: st.Until, Data: data, UpdatedAt: now, Version: version}
}
