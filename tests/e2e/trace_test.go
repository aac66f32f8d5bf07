package e2e_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/tracing"
)

// drover serve with OTEL_EXPORTER_OTLP_ENDPOINT set exports a card's path:
// the give-up attempt's trace (claim, workspace, agent run, classification,
// route under drover.run, the failure as error status) and the delivery of
// its notification, linked to that run. The batch delay is a minute, so the
// spans can only arrive by the flush on SIGTERM.
func TestServeExportsTheTraceOfACard(t *testing.T) {
	rcv := testkit.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "60000")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	w := wf{Default: "sim", Policy: "  max_attempts: 1\n", Notify: "webhook: {url: " + rcv.URL + "/hook}\nallow_private: true\n"}
	e := newEnv(t, w, "", testkit.SQLite)
	c := e.addCard("fails and gives up", "--spec", `{"sim":["agent_failed"],"sim_delay":"10ms"}`)
	e.start()
	eventually(t, 20*time.Second, "the card to give up", func() bool { return e.card(c.Identifier).State == "blocked" })
	rcv.WaitFor(t, "/hook", 1, 20*time.Second)
	if n := len(rcv.Requests(testkit.OTLPTracesPath)); n != 0 {
		t.Fatalf("%d trace exports before the stop; the batch delay should hold them", n)
	}
	e.kill(syscall.SIGTERM)

	runs := e.runs(c.Identifier)
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	run := tracing.RunSpanContext(runs[0].ID)
	var root testkit.Span
	children := map[string]testkit.Span{}
	var deliveries []testkit.Span
	for _, s := range rcv.Spans(t) {
		switch {
		case s.Name == tracing.SpanDeliver:
			deliveries = append(deliveries, s)
		case s.TraceID != run.TraceID().String():
		case s.Name == tracing.SpanRun:
			root = s
		default:
			children[s.Name] = s
		}
	}
	if root.SpanID != run.SpanID().String() || root.Attrs["drover.card.identifier"] != c.Identifier || root.Attrs["drover.run.id"] != runs[0].ID ||
		root.Attrs["drover.outcome"] != "failed" || root.Attrs["drover.decision.verb"] != "give_up" || root.Attrs["drover.kind"] != "agent_failed" || !root.Error || root.Resource["service.name"] != "drover" {
		t.Fatalf("root span = %+v", root)
	}
	for _, name := range []string{tracing.SpanClaim, tracing.SpanWorkspace, tracing.SpanAgent, tracing.SpanClassify, tracing.SpanRoute} {
		if s, ok := children[name]; !ok || s.ParentID != root.SpanID {
			t.Fatalf("no %s span under the run's root; got %v", name, children)
		}
	}
	if len(deliveries) != 1 {
		t.Fatalf("%d delivery spans, want 1", len(deliveries))
	}
	d := deliveries[0]
	if d.Error || d.Attrs["drover.notify.event"] != "gave_up" || d.Attrs["drover.card.id"] != c.ID ||
		len(d.Links) != 1 || d.Links[0] != (testkit.SpanLink{TraceID: root.TraceID, SpanID: root.SpanID}) {
		t.Fatalf("delivery span = %+v, want a delivered gave_up linked to the run's root", d)
	}
}
