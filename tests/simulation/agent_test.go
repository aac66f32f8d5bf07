package simulation

// The fake in-process agent of the simulation: it parks until the harness
// releases it, then answers with a seeded verdict, and makes the agent's own
// calls (block, ask, done, comments) through the fenced service.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/sim"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
)

type fakeAgent struct {
	w *World
	p *proc
}

func (a *fakeAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	w := a.w
	iv := &invocation{card: inv.Card, run: inv.Run, proc: a.p, ctx: ctx, startStep: w.step}
	w.invs = append(w.invs, iv)
	if cur := w.live[inv.Card.ID]; cur != nil && !cur.proc.partitioned {
		// (a partitioned process's agent may go on beside its successor's:
		// its run was recovered, its routing will find the claim gone)
		w.violate("two live agent sessions on %s: attempt %d (node %s) started while attempt %d (node %s) runs",
			inv.Card.Identifier, inv.Run.Attempt, a.p.node, cur.run.Attempt, cur.proc.node)
	}
	w.live[inv.Card.ID] = iv
	if why := invalidInput(inv.Card); why != "" {
		w.violate("agent session opened for %s with invalid input (%s)", inv.Card.Identifier, why)
	}
	iv.verdict = w.verdictFor(inv.Card)
	iv.calls = inv.Calls
	w.agentCalls(iv)
	if w.intn(4) == 0 {
		// A priced session: its cost is reported live, as real agents do.
		iv.verdict.Signals.Structured.CostUSD, iv.verdict.Signals.Structured.CostKnown = 0.1, true
		if inv.Progress != nil {
			inv.Progress(agent.Progress{CostUSD: 0.1})
		}
	}
	if w.settling || w.intn(10) < 6 {
		w.endSession(iv)
		return iv.verdict, nil
	}
	iv.steps = 1 + w.intn(8)
	iv.release = make(chan struct{})
	w.entered <- iv
	<-iv.release
	if iv.calls != nil && w.intn(3) == 0 {
		// A note at the end of a long session: refused, changing nothing,
		// when the claim passed to another node meanwhile (checked).
		_, _ = iv.calls.Comment(context.Background(), "sim: still here at the end")
	}
	w.endSession(iv)
	if ctx.Err() != nil {
		return agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: -1, Signaled: true}}, nil
	}
	return iv.verdict, nil
}

func (w *World) endSession(iv *invocation) {
	if iv.ended {
		return
	}
	iv.ended, iv.endStep = true, w.step
	if w.live[iv.card.ID] == iv {
		delete(w.live, iv.card.ID)
	}
}

// agentCalls makes some sessions report through the agent's own calls, as
// an agent does through drover mcp: block, ask or done (the report then
// decides the outcome unless drover stopped the run), with a comment and a
// progress note first. A call the store refuses or fails reports nothing.
func (w *World) agentCalls(iv *invocation) {
	if iv.calls == nil || w.intn(6) != 0 {
		return
	}
	ctx := context.Background()
	if w.intn(2) == 0 {
		_, _ = iv.calls.Comment(ctx, "sim: looking at "+iv.card.Identifier)
		_, _ = iv.calls.Progress(ctx, "sim: halfway")
	}
	var err error
	kind := board.ReportBlock
	switch n := w.intn(6); {
	case n < 3:
		_, err = iv.calls.Block(ctx, "sim: the card names a service that does not exist", "spec.sim", "edit the card, then drover card resume")
	case n < 5:
		kind = board.ReportAsk
		_, err = iv.calls.Ask(ctx, "sim: which region?", []string{"eu", "us"})
	default:
		kind = board.ReportDone
		_, err = iv.calls.Done(ctx, "sim: done by my own account")
	}
	iv.tried = kind
	if err == nil {
		iv.report = kind
		w.logf("%s attempt %d reports %s", iv.card.Identifier, iv.run.Attempt, kind)
		// A second report in the same run is refused (checked: the stored
		// report stays the first).
		_, _ = iv.calls.Done(ctx, "sim: a second report")
	}
}

var verdictKinds = []struct {
	kind   policy.Kind
	weight int
}{
	{policy.KindSucceeded, 30}, {policy.KindAgentFailed, 14}, {policy.KindInputRequired, 7}, {policy.KindRateLimited, 7},
	{policy.KindUsageLimited, 2}, {policy.KindProviderUnavailable, 5}, {policy.KindNetwork, 5}, {policy.KindTimeout, 3},
	{policy.KindMaxTurns, 2}, {policy.KindStalled, 2}, {policy.KindUnknown, 3}, {policy.KindWorkspaceSetup, 2},
	{policy.KindInterrupted, 2}, {policy.KindInvalidInput, 1}, {policy.KindRefused, 1}, {policy.KindContextExhausted, 1},
	{policy.KindPermissionDenied, 1}, {policy.KindQuotaExhausted, 1}, {policy.KindAuthFailed, 1}, {policy.KindConfigError, 1},
}

// verdictFor is what a session on c ends with: during the world's profile
// fault, the fault (the same failure on every card of the sim profile, as
// a suspended account would be); on a card with a sticky failure, mostly
// that failure (the same failure again on one card); else a seeded verdict.
func (w *World) verdictFor(c board.Card) agent.Result {
	if w.faultFrom <= w.step && w.step < w.faultTo && c.Agent == "" && !w.settling {
		msg := fmt.Sprintf("sim: the workspace of tenant %d was suspended by its owner", 1000+w.intn(9000))
		return agent.Result{Forced: &policy.Classification{Kind: policy.KindUnknown, Message: msg, Source: "sim"}, Signals: policy.Signals{AgentKind: "sim", ExitCode: 1}}
	}
	if h := fnv32(c.Identifier); h%3 == 0 && w.intn(10) < 7 && !w.settling {
		msg := "sim: the fixture " + stickyWords[h/3%uint32(len(stickyWords))] + " does not load"
		return agent.Result{Forced: &policy.Classification{Kind: policy.KindAgentFailed, Message: msg, Source: "sim"}, Signals: policy.Signals{AgentKind: "sim", ExitCode: 1}}
	}
	return w.verdict()
}

var stickyWords = []string{"alpha", "bravo", "charlie", "delta", "echo"}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// verdict draws what this session ends with: a forced classification, or
// plain signals the real classifier reads.
func (w *World) verdict() agent.Result {
	total := 0
	for _, k := range verdictKinds {
		total += k.weight
	}
	n := w.intn(total)
	kind := verdictKinds[0].kind
	for _, k := range verdictKinds {
		if n < k.weight {
			kind = k.kind
			break
		}
		n -= k.weight
	}
	switch {
	case kind == policy.KindSucceeded && w.intn(2) == 0:
		return agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 0}, LastLine: "done"}
	case kind == policy.KindAgentFailed && w.intn(2) == 0:
		return agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 1, Stderr: "tests failed"}, LastLine: "tests failed"}
	}
	// One of two texts per kind: the same failure across cards and again
	// on a card (a hold, the repeat cap), and failures whose text changes.
	cls := policy.Classification{Kind: kind, Message: "sim: " + string(kind) + failureWhere[w.intn(len(failureWhere))], Source: "sim"}
	switch kind {
	case policy.KindRateLimited, policy.KindUsageLimited:
		if w.intn(2) == 0 {
			cls.RetryAt = w.clk.Now().Add(time.Duration(1+w.intn(300)) * time.Second)
		} else {
			cls.RetryAfter = time.Duration(w.intn(120)) * time.Second
		}
	case policy.KindInputRequired:
		cls.Message = "which database should I use?"
	}
	code := 1
	if kind == policy.KindSucceeded {
		code = 0
	}
	return agent.Result{Forced: &cls, Signals: policy.Signals{AgentKind: "sim", ExitCode: code}}
}

// invalidInput is the simulation's own oracle for a card's input: the
// planner profile's schema needs a string plan, and every sim profile needs
// a well-formed spec.sim.
func invalidInput(c board.Card) string {
	if _, err := sim.ParseSpec(c.Spec); err != nil {
		return err.Error()
	}
	if c.Agent == "planner" {
		var v struct {
			Plan any `json:"plan"`
		}
		_ = json.Unmarshal(c.Spec, &v)
		if _, ok := v.Plan.(string); !ok {
			return "spec.plan is not a string"
		}
	}
	return ""
}

var failureWhere = []string{"", " in module beta"}

var specs = []string{`{}`, `{"plan":"do it"}`, `{"plan":7}`, `{"sim":["bogus"]}`, `{"plan":"x","sim":["agent_failed"]}`}
