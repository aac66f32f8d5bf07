package tracing_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
	"github.com/drover-dev/drover/internal/tracing"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// otelEnv clears every variable Setup reads, then sets kv.
func otelEnv(t *testing.T, kv ...string) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

// emit makes one run's spans and a delivery, then shuts tracing down.
func emit(t *testing.T, shutdown func(context.Context) error) (board.Card, board.Run) {
	t.Helper()
	c := board.Card{ID: board.NewID(), Identifier: "DRV-7"}
	r := board.Run{ID: board.NewID(), CardID: c.ID, Attempt: 2, Agent: "sim", Node: "n1"}
	ctx, root := tracing.StartRun(context.Background(), c, r)
	_, claim := tracing.Start(ctx, tracing.SpanClaim)
	tracing.End(claim, nil)
	rctx, route := tracing.Start(ctx, tracing.SpanRoute)
	tracing.Routed(rctx, board.OutcomeFailed, "agent_failed", "retry", "ready", "the agent failed")
	tracing.End(route, errors.New("store unavailable"))
	tracing.End(root, nil)
	_, d := tracing.StartDelivery(context.Background(), store.OutboxItem{CardID: c.ID, RunID: r.ID, Channel: "webhook", Event: "gave_up", Key: "k"})
	tracing.Delivered(d, store.OutboxResult{Error: "receiver answered 500"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	return c, r
}

// Without an endpoint nothing is installed: the global provider stays the
// no-op one, spans do not record, and the receiver gets nothing.
func TestOffWithoutEndpointOrWhenDisabled(t *testing.T) {
	rcv := testkit.NewReceiver(t)
	for name, env := range map[string][]string{
		"no endpoint":      nil,
		"sdk disabled":     {"OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL, "OTEL_SDK_DISABLED", "true"},
		"exporter is none": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL + testkit.OTLPTracesPath, "OTEL_TRACES_EXPORTER", "none"},
	} {
		t.Run(name, func(t *testing.T) {
			otelEnv(t, env...)
			if tracing.Enabled() {
				t.Fatal("Enabled() = true")
			}
			shutdown, err := tracing.Setup(context.Background(), quiet)
			if err != nil {
				t.Fatal(err)
			}
			if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
				t.Fatal("Setup installed an SDK tracer provider while tracing is off")
			}
			ctx, sp := tracing.Start(context.Background(), tracing.SpanRun)
			if sp.IsRecording() || tracing.Traceparent(ctx) != "" {
				t.Fatal("a span records (or gives agents a TRACEPARENT) while tracing is off")
			}
			emit(t, shutdown)
			if got := rcv.Requests(""); len(got) != 0 {
				t.Fatalf("receiver got %d requests while tracing is off", len(got))
			}
		})
	}
}

// On, one run's spans arrive with ids derived from the run id, the route
// under the run's root, the outcome on both, errors as error status, and
// the delivery in a trace of its own linked to the run's root.
func TestExportsARunAndLinksItsDelivery(t *testing.T) {
	rcv := testkit.NewReceiver(t)
	otelEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL, "OTEL_SERVICE_NAME", "drover-test", "OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci")
	shutdown, err := tracing.Setup(context.Background(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	c, r := emit(t, shutdown)
	spans := map[string]testkit.Span{}
	for _, s := range rcv.Spans(t) {
		spans[s.Name] = s
	}
	root, route, claim, del := spans[tracing.SpanRun], spans[tracing.SpanRoute], spans[tracing.SpanClaim], spans[tracing.SpanDeliver]
	want := tracing.RunSpanContext(r.ID)
	if root.TraceID != want.TraceID().String() || root.SpanID != want.SpanID().String() || root.ParentID != "" {
		t.Fatalf("root span %s/%s parent %q, want %s/%s and no parent", root.TraceID, root.SpanID, root.ParentID, want.TraceID(), want.SpanID())
	}
	for _, s := range []testkit.Span{route, claim} {
		if s.TraceID != root.TraceID || s.ParentID != root.SpanID {
			t.Fatalf("span %q: trace %s parent %s, want a child of the run's root", s.Name, s.TraceID, s.ParentID)
		}
	}
	if a := root.Attrs; a["drover.card.id"] != c.ID || a["drover.card.identifier"] != "DRV-7" || a["drover.run.id"] != r.ID ||
		a["drover.run.attempt"] != "2" || a["drover.agent.profile"] != "sim" || a["drover.outcome"] != "failed" || a["drover.kind"] != "agent_failed" {
		t.Fatalf("root attributes = %v", a)
	}
	if !root.Error || !strings.Contains(root.StatusMessage, "agent_failed") || claim.Error {
		t.Fatalf("status: root error %v %q, claim error %v", root.Error, root.StatusMessage, claim.Error)
	}
	if !route.Error || route.StatusMessage != "store unavailable" || route.Attrs["drover.decision.verb"] != "retry" {
		t.Fatalf("route span = %+v", route)
	}
	if del.TraceID == root.TraceID || del.ParentID != "" || len(del.Links) != 1 || del.Links[0] != (testkit.SpanLink{TraceID: root.TraceID, SpanID: root.SpanID}) {
		t.Fatalf("delivery span %+v: want a root of its own trace linked to the run's root", del)
	}
	if !del.Error || del.Attrs["drover.notify.channel"] != "webhook" || del.Attrs["drover.run.id"] != r.ID {
		t.Fatalf("delivery span = %+v", del)
	}
	if res := root.Resource; res["service.name"] != "drover-test" || res["deployment.environment"] != "ci" {
		t.Fatalf("resource = %v", res)
	}
	if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
		t.Fatal("shutdown left the SDK provider installed")
	}
}

// A setting drover cannot honour is refused, naming the variable.
func TestRefusesUnknownProtocolsAndExporters(t *testing.T) {
	for want, env := range map[string][]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL=\"thrift\"":      {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"},
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=\"http\"": {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
		"OTEL_TRACES_EXPORTER=\"zipkin\"":             {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER", "zipkin"},
	} {
		otelEnv(t, env...)
		_, err := tracing.Setup(context.Background(), quiet)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: err = %v, want it to name %s", env, err, want)
		}
		if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
			t.Fatal("a refused setting installed a provider")
		}
	}
}

// An endpoint that is not an http(s) URL with a host is refused, naming
// the variable and the form it takes, instead of exporting to the SDK's
// default endpoint; a password in it is not repeated.
func TestRefusesAnEndpointThatIsNotAURL(t *testing.T) {
	for _, c := range []struct{ env []string }{
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1"}},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"}},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://u:s3cret@%zz"}},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "/v1/traces"}},
	} {
		otelEnv(t, c.env...)
		_, err := tracing.Setup(context.Background(), quiet)
		if err == nil || !strings.Contains(err.Error(), c.env[0]) || !strings.Contains(err.Error(), "http://127.0.0.1:4318") {
			t.Fatalf("%v: err = %v, want it to name %s and show the form it takes", c.env, err, c.env[0])
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("%v: the error repeats the password: %v", c.env, err)
		}
		if _, sdk := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdk {
			t.Fatal("a refused endpoint installed a provider")
		}
	}
}
