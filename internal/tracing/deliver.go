package tracing

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store"
)

// StartDelivery starts the span of one delivery try of outbox row it. It is
// the root of a trace of its own, linked to the root span of the run the
// row reports (when it reports one): delivery happens after that run's
// trace has ended, retries for as long as its backoff says, may run on
// another node, and some rows (a paused profile) belong to no run.
func StartDelivery(ctx context.Context, it store.OutboxItem) (context.Context, Span) {
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient)}
	if it.RunID != "" {
		opts = append(opts, trace.WithLinks(RunLink(it.RunID)))
	}
	ctx, sp := otel.Tracer(tracerName).Start(ctx, SpanDeliver, opts...)
	if sp.IsRecording() {
		sp.SetAttributes(
			attribute.String("drover.card.id", it.CardID), attribute.String("drover.run.id", it.RunID),
			attribute.String("drover.notify.channel", it.Channel), attribute.String("drover.notify.event", it.Event),
			attribute.String("drover.notify.key", it.Key), attribute.Int("drover.notify.attempt", it.Attempts+1))
	}
	return ctx, sp
}

// Delivered records the result of a delivery try on sp and ends it; a try
// that was refused or abandoned is an error.
func Delivered(sp Span, res store.OutboxResult) {
	if sp.IsRecording() {
		sp.SetAttributes(attribute.Bool("drover.notify.delivered", res.Delivered), attribute.Bool("drover.notify.dead", res.Dead))
		if !res.Delivered {
			sp.SetStatus(codes.Error, excerpt.Clip(res.Error, 500))
		}
	}
	sp.End()
}
