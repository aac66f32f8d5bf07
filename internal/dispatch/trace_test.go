package dispatch

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/tracing"
)

// One card that fails once and then succeeds leaves two traces at an OTLP
// receiver, one per attempt: drover.run at the root with the claim, the
// workspace (its hooks below it), the agent run, the classification and the
// route as children, the card and run ids on the root, the outcome on the
// root and the route, and the failed attempt's error status.
func TestTraceOfEachAttempt(t *testing.T) {
	rcv, flush := traceTo(t)
	w := newWorldFrom(t, worldWorkflow(3).Set("hooks", `{after_create: "true", before_run: 'echo "$TRACEPARENT" > traceparent-$DROVER_ATTEMPT', after_run: "true"}`))
	c := w.add("fails once, then succeeds", "", `{"sim":["agent_failed","succeeded"],"sim_delay":"1ms"}`)
	stop := w.run(w.dispatcher("n1"))
	w.waitFor(c.Identifier, "review", inState("review"))
	stop()
	flush()

	byTrace := map[string][]testkit.Span{}
	for _, s := range rcv.Spans(t) {
		byTrace[s.TraceID] = append(byTrace[s.TraceID], s)
	}
	runs := w.runs(c.ID)
	if len(runs) != 2 || len(byTrace) != 2 {
		t.Fatalf("%d runs (%s), %d traces; want 2 of each", len(runs), attempts(runs), len(byTrace))
	}
	for _, r := range runs {
		tid := tracing.RunSpanContext(r.ID).TraceID().String()
		spans := byTrace[tid]
		var root testkit.Span
		children := map[string]testkit.Span{}
		hooks := map[string]testkit.Span{}
		for _, s := range spans {
			switch s.Name {
			case tracing.SpanRun:
				root = s
			case tracing.SpanHook:
				hooks[s.Attrs["drover.hook.name"]] = s
			default:
				children[s.Name] = s
			}
		}
		if root.Name == "" || root.ParentID != "" {
			t.Fatalf("attempt %d: no root drover.run span in trace %s: %+v", r.Attempt, tid, spans)
		}
		a := root.Attrs
		if a["drover.card.id"] != c.ID || a["drover.card.identifier"] != c.Identifier || a["drover.run.id"] != r.ID ||
			a["drover.run.attempt"] != strconv.Itoa(r.Attempt) || a["drover.agent.profile"] != "sim" || a["drover.outcome"] != string(r.Outcome) || a["drover.kind"] != r.Kind {
			t.Fatalf("attempt %d: root attributes %v, run %+v", r.Attempt, a, r)
		}
		for _, name := range []string{tracing.SpanClaim, tracing.SpanWorkspace, tracing.SpanAgent, tracing.SpanClassify, tracing.SpanRoute} {
			s, ok := children[name]
			if !ok || s.ParentID != root.SpanID {
				t.Fatalf("attempt %d: span %s missing or not a child of the root: %+v", r.Attempt, name, spans)
			}
		}
		ws := children[tracing.SpanWorkspace]
		if r.Attempt == 1 && hooks["after_create"].ParentID != ws.SpanID || hooks["before_run"].ParentID != ws.SpanID || hooks["after_run"].ParentID != root.SpanID {
			t.Fatalf("attempt %d: hooks %+v, want after_create (first attempt) and before_run under the workspace span, after_run under the root", r.Attempt, hooks)
		}
		tp, _ := os.ReadFile(filepath.Join(r.Workspace, "traceparent-"+strconv.Itoa(r.Attempt)))
		if want := "00-" + tid + "-" + root.SpanID + "-01"; strings.TrimSpace(string(tp)) != want {
			t.Fatalf("attempt %d: the hooks' TRACEPARENT is %q, want %q (the run's root span)", r.Attempt, tp, want)
		}
		if ag := children[tracing.SpanAgent].Attrs; ag["drover.agent.kind"] != "sim" || ag["drover.agent.exit_code"] == "" || children[tracing.SpanWorkspace].Attrs["drover.workspace.path"] != r.Workspace {
			t.Fatalf("attempt %d: agent span %v, workspace span %v", r.Attempt, ag, children[tracing.SpanWorkspace].Attrs)
		}
		if got := children[tracing.SpanClassify].Attrs["drover.kind"]; got != r.Kind {
			t.Fatalf("attempt %d: classify kind %q, run kind %q", r.Attempt, got, r.Kind)
		}
		route := children[tracing.SpanRoute]
		failed := r.Attempt == 1
		if route.Attrs["drover.outcome"] != string(r.Outcome) || root.Error != failed || children[tracing.SpanAgent].Error != failed || route.Error != failed {
			t.Fatalf("attempt %d (%s): error status root %v agent %v route %v; want %v", r.Attempt, r.Outcome, root.Error, children[tracing.SpanAgent].Error, route.Error, failed)
		}
		if failed && (r.Kind != "agent_failed" || root.StatusMessage == "") {
			t.Fatalf("attempt 1: kind %s, status message %q", r.Kind, root.StatusMessage)
		}
	}
}

// A run recovered after its owner stopped is routed inside the run's own
// trace: the route span's parent is the run's root span, by its derived ids.
func TestRecoveredRunRoutesInItsTrace(t *testing.T) {
	rcv, flush := traceTo(t)
	w := newWorld(t, 3)
	c := w.add("claimed, then its owner restarts", "", `{}`)
	d := w.dispatcher("n1")
	ctx := context.Background()
	cur := w.claimNoRun(d, c)
	if err := d.recoverCard(ctx, cur, true); err != nil {
		t.Fatal(err)
	}
	flush()
	run := w.runs(c.ID)[0]
	root := tracing.RunSpanContext(run.ID)
	var routes []testkit.Span
	for _, s := range rcv.Spans(t) {
		if s.Name == tracing.SpanRoute {
			routes = append(routes, s)
		}
	}
	if len(routes) != 1 || routes[0].TraceID != root.TraceID().String() || routes[0].ParentID != root.SpanID().String() ||
		routes[0].Attrs["drover.recovered"] != "true" || routes[0].Attrs["drover.outcome"] != string(run.Outcome) || run.Outcome != "interrupted" {
		t.Fatalf("route spans %+v; want one in run %s's trace under its root, recovered, outcome %s", routes, run.ID, run.Outcome)
	}
}

// traceTo turns tracing on towards a fresh OTLP receiver; flush exports
// what was recorded and turns tracing off again.
func traceTo(t *testing.T) (*testkit.Receiver, func()) {
	t.Helper()
	rcv := testkit.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	shutdown, err := tracing.Setup(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := false
	flush := func() {
		if done {
			return
		}
		done = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(flush)
	return rcv, flush
}
