package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
)

// Span is an OpenTelemetry span, so callers need not import the API.
type Span = trace.Span

// Span names: one trace per run attempt, drover.run at its root, the steps
// as its children; a notification delivery is a trace of its own linked to
// the run's root span.
const (
	SpanRun       = "drover.run"       // one attempt, claim to route
	SpanClaim     = "drover.claim"     // the claim transaction
	SpanWorkspace = "drover.workspace" // workspace and its set-up hooks
	SpanHook      = "drover.hook"      // one hook (drover.hook.name)
	SpanAgent     = "drover.agent.run" // the agent process
	SpanClassify  = "drover.classify"  // policy.Classify on the result
	SpanRoute     = "drover.route"     // decide and the routing transaction
	SpanDeliver   = "drover.notify.deliver"
)

const tracerName = "github.com/drover-dev/drover"

// Start starts a span named name as a child of the span in ctx. When tracing
// is off it returns the no-op span and records nothing.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, Span) {
	return otel.Tracer(tracerName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// StartRun starts the root span of run r on card c. Its trace and span ids
// are derived from the run id (RunSpanContext), so a route by another
// process after a crash and the run's notifications find it without storing
// anything. Routed on a context below it also marks this span.
func StartRun(ctx context.Context, c board.Card, r board.Run) (context.Context, Span) {
	ctx = context.WithValue(ctx, runIDKey{}, r.ID)
	ctx, sp := otel.Tracer(tracerName).Start(ctx, SpanRun, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal))
	if sp.IsRecording() {
		sp.SetAttributes(append(cardAttrs(c), runAttrs(r)...)...)
	}
	return context.WithValue(ctx, rootKey{}, sp), sp
}

// RunContext returns ctx with run runID's root span as its remote parent:
// spans started from it join that run's trace (recovery of a dead owner's run).
func RunContext(ctx context.Context, runID string) context.Context {
	return trace.ContextWithRemoteSpanContext(ctx, RunSpanContext(runID))
}

// RunLink links a span to run runID's root span.
func RunLink(runID string) trace.Link {
	return trace.Link{SpanContext: RunSpanContext(runID)}
}

// RunSpanContext is the span context of run runID's root span: the trace id
// is the first 16 bytes of SHA-256("drover.run/"+runID), the span id the next 8.
func RunSpanContext(runID string) trace.SpanContext {
	tid, sid := runIDs(runID)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

func runIDs(runID string) (trace.TraceID, trace.SpanID) {
	sum := sha256.Sum256([]byte("drover.run/" + runID))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	return tid, sid
}

// FromContext returns the span in ctx (the no-op span when there is none).
func FromContext(ctx context.Context) Span { return trace.SpanFromContext(ctx) }

// End records err (when not nil) on sp as an error and ends it.
func End(sp Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, excerpt.Clip(err.Error(), 500))
	}
	sp.End()
}

// Fail marks sp as failed with kind and message, without ending it.
func Fail(sp Span, kind, message string) {
	sp.SetStatus(codes.Error, excerpt.Clip(kind+": "+message, 500))
}

// Routed records routing's result on the span in ctx and on the run's root
// span above it: the outcome, the failure kind, the policy's verb and the
// card's next column. A run that did not succeed marks both as errors.
func Routed(ctx context.Context, outcome board.Outcome, kind, verb, state, why string) {
	attrs := []attribute.KeyValue{
		attribute.String("drover.outcome", string(outcome)), attribute.String("drover.kind", kind),
		attribute.String("drover.decision.verb", verb), attribute.String("drover.card.state", state),
	}
	for _, sp := range []Span{trace.SpanFromContext(ctx), root(ctx)} {
		if sp == nil || !sp.IsRecording() {
			continue
		}
		sp.SetAttributes(attrs...)
		if outcome != board.OutcomeSucceeded {
			Fail(sp, kind, why)
		}
	}
}

func root(ctx context.Context) Span {
	sp, _ := ctx.Value(rootKey{}).(Span)
	return sp
}

// Attribute constructors for the spans' own fields.

// Hook names the hook a drover.hook span runs.
func Hook(name string) attribute.KeyValue { return attribute.String("drover.hook.name", name) }

// Agent names the agent profile and kind of a drover.agent.run span.
func Agent(profile, kind string) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("drover.agent.profile", profile), attribute.String("drover.agent.kind", kind)}
}

// AgentExited records how the agent process ended on a drover.agent.run
// span: its exit code (-1: it did not exit normally), why drover stopped it
// ("" when it did not) and the tokens and cost it reported.
func AgentExited(sp Span, exitCode int, killedFor string, tokensIn, tokensOut int64, costUSD float64) {
	if !sp.IsRecording() {
		return
	}
	sp.SetAttributes(attribute.Int("drover.agent.exit_code", exitCode), attribute.String("drover.agent.killed_for", killedFor),
		attribute.Int64("drover.agent.tokens_in", tokensIn), attribute.Int64("drover.agent.tokens_out", tokensOut),
		attribute.Float64("drover.agent.cost_usd", costUSD))
}

// Workspace names the directory of a drover.workspace span and whether this
// run created it.
func Workspace(sp Span, dir string, created bool) {
	sp.SetAttributes(attribute.String("drover.workspace.path", dir), attribute.Bool("drover.workspace.created", created))
}

// Traceparent is the W3C traceparent of the span in ctx, for the agent's
// TRACEPARENT variable, so an agent that traces can join the run's trace;
// "" when tracing is off.
func Traceparent(ctx context.Context) string {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get("traceparent")
}

// Classified records a classification on sp.
func Classified(sp Span, kind, source string) {
	sp.SetAttributes(attribute.String("drover.kind", kind), attribute.String("drover.classification.source", source))
}

// Recovered marks a drover.route span as the recovery of a dead owner's run.
func Recovered(recovering bool) attribute.KeyValue {
	return attribute.Bool("drover.recovered", recovering)
}

func cardAttrs(c board.Card) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("drover.card.id", c.ID), attribute.String("drover.card.identifier", c.Identifier)}
}

func runAttrs(r board.Run) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("drover.run.id", r.ID), attribute.Int("drover.run.attempt", r.Attempt),
		attribute.Int("drover.run.retry_epoch", r.RetryEpoch), attribute.String("drover.agent.profile", r.Agent),
		attribute.String("drover.node", r.Node),
	}
}

type (
	runIDKey struct{}
	rootKey  struct{}
)

// idGenerator derives a run's root span ids from its run id (see
// RunSpanContext) and draws every other id at random, as the SDK does.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if id, ok := ctx.Value(runIDKey{}).(string); ok && id != "" {
		if tid, sid := runIDs(id); tid.IsValid() && sid.IsValid() {
			return tid, sid
		}
	}
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, randomSpanID()
}

func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return randomSpanID() }

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
