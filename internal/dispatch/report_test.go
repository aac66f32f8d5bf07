package dispatch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
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

// lateReport is a store whose first routing write lets the agent's report
// land first: between routing's read of the run and its write, as an
// agent's drover_block racing its own exit would.
type lateReport struct {
	store.Store
	report func() error
	done   bool
}

func (s *lateReport) Apply(ctx context.Context, ch store.Change) error {
	if !s.done && ch.Run != nil && ch.Run.Outcome != "" && ch.Card != nil {
		s.done = true
		if err := s.report(); err != nil {
			return err
		}
	}
	return s.Store.Apply(ctx, ch)
}

// A report that lands after routing read the run (and before it wrote)
// decides the routing: the card is blocked with the agent's words, not
// moved to review on the clean exit routing first saw.
func TestReportDuringRoutingDecidesIt(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		ctx := context.Background()
		inner := testkit.Store(t, backend)
		st := &lateReport{Store: inner}
		cfg := worldWorkflow(3).Config(t, t.TempDir())
		d, err := New(Options{Store: st, Config: cfg, Node: "n1", LogDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		c, err := inner.CreateCard(ctx, "DRV", board.Card{Title: "races", State: "ready", Agent: "sim", Spec: []byte(`{"sim":["succeeded"]}`)}, "test")
		if err != nil {
			t.Fatal(err)
		}
		claimed, run := testkit.Claim(t, inner, c, "n1", "sim")
		calls := &agentcall.Service{Store: inner, RunID: run.ID}
		st.report = func() error {
			_, err := calls.Block(ctx, "the staging database refuses connections", "config/db.yaml", "open the firewall, then resume")
			return err
		}
		ok := policy.Classification{Kind: policy.KindSucceeded, Message: "exit 0", Source: "exit"}
		res := &agent.Result{Signals: policy.Signals{AgentKind: "sim", ExitCode: 0}}
		if err := d.routes.route(ctx, routeReq{cardID: c.ID, claim: *claimed.Claim, run: run, cls: ok, res: res}); err != nil {
			t.Fatal(err)
		}
		if !st.done {
			t.Fatal("the report was never interleaved with the routing")
		}
		got, err := inner.GetCard(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		r, err := inner.GetRun(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != "blocked" || got.BlockReason == nil || got.BlockReason.What != "the staging database refuses connections" ||
			r.Kind != string(policy.KindAgentBlocked) || r.Outcome != board.OutcomeBlocked || r.Report == nil {
			t.Fatalf("card %s (%+v), run %s/%s report %+v; want blocked with the agent's report, which landed during routing",
				got.State, got.BlockReason, r.Outcome, r.Kind, r.Report)
		}
	})
}
