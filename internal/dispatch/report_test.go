package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
)

// An agent that blocks through its own calls (the sim, as a real agent does
// through drover mcp) blocks the card at once with its words, uncounted,
// with one blocked notification.
func TestAgentBlockRoutesToBlockedUncounted(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("Pay through /v2/pay", "sim", `{"sim": ["agent_blocked"]}`)
	stop := w.run(w.dispatcher("n1"))
	defer stop()
	got := w.waitFor(c.ID, "blocked", inState("blocked"))
	br := got.BlockReason
	if br == nil || br.Kind != string(policy.KindAgentBlocked) || !strings.HasPrefix(br.What, "simulated: the card asks") || br.Where != "spec.sim" ||
		!strings.Contains(br.How, "drover card resume "+c.Identifier) {
		t.Fatalf("block reason = %+v, want the agent's own what/where/how", br)
	}
	rs := w.runs(c.ID)
	if len(rs) != 1 || rs[0].Kind != string(policy.KindAgentBlocked) || rs[0].Counted || rs[0].Outcome != board.OutcomeBlocked ||
		rs[0].Report == nil || rs[0].Report.Kind != board.ReportBlock {
		t.Fatalf("runs = %+v, want one uncounted agent_blocked run with its report", rs)
	}
	var source string
	for _, ev := range w.events(c.ID) {
		if ev.Type == board.EvBlocked {
			source = string(ev.Data)
		}
	}
	if !strings.Contains(source, `"source":"agent:drover_block"`) {
		t.Fatalf("blocked event data %s does not name the agent's report as its source", source)
	}
	ob, _ := w.st.ListOutbox(context.Background(), store.OutboxFilter{CardID: c.ID})
	if len(ob) != 1 || ob[0].Event != policy.NotifyBlocked {
		t.Fatalf("outbox = %+v, want one blocked notice", ob)
	}
}

// reportThenKilled reports a block, then ends as drover stopping it for
// a timeout would.
type reportThenKilled struct{}

func (reportThenKilled) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	if _, err := inv.Calls.Block(ctx, "cannot reach the staging database", "config/db.yaml", "open the firewall"); err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Signals: policy.Signals{AgentKind: "command", ExitCode: -1, Signaled: true, KilledFor: "timeout"}}, nil
}

// When drover stopped the run itself, drover's reason wins; the agent's
// report stays on the run and is named in its error.
func TestDroversKillBeatsTheAgentsReport(t *testing.T) {
	w := newWorld(t, 3)
	c := w.add("Migrate", "sim", `{"sim": ["succeeded"]}`)
	d, err := New(Options{Store: w.st, Config: w.cfg, Node: "n1", LogDir: filepath.Join(w.dir, "logs"), Outbox: outboxRows,
		NewAgent: func(agent.Profile) (agent.Agent, error) { return reportThenKilled{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	stop := w.run(d)
	var rs []board.Run
	w.waitFor(c.ID, "a finished run", func(board.Card) bool { rs = w.runs(c.ID); return len(rs) > 0 && !rs[0].Open() })
	stop()
	r := rs[0]
	if r.Kind != string(policy.KindTimeout) || !r.Counted || !strings.Contains(r.Error, "the agent had reported (drover_block): cannot reach the staging database") {
		t.Fatalf("run = kind %s counted %v error %q; want a counted timeout naming the agent's report", r.Kind, r.Counted, r.Error)
	}
	if r.Report == nil || r.Report.What != "cannot reach the staging database" {
		t.Fatalf("the report was not kept beside drover's reason: %+v", r.Report)
	}
}
