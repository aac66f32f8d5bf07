package tracing_test

import (
	"context"
	"net"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/drover-dev/drover/internal/tracing"
)

// grpcCollector is an in-process OTLP/gRPC trace receiver.
type grpcCollector struct {
	coltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *grpcCollector) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.names = append(c.names, s.GetName())
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends the spans over gRPC instead.
func TestExportsOverGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &grpcCollector{}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, col)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	otelEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	shutdown, err := tracing.Setup(context.Background(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	emit(t, shutdown)
	col.mu.Lock()
	defer col.mu.Unlock()
	got := map[string]bool{}
	for _, n := range col.names {
		got[n] = true
	}
	if !got[tracing.SpanRun] || !got[tracing.SpanRoute] || !got[tracing.SpanDeliver] {
		t.Fatalf("the gRPC collector got spans %v", col.names)
	}
}
