package testkit

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// OTLPTracesPath is where an OTLP/HTTP exporter posts spans under a base
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT=Receiver.URL).
const OTLPTracesPath = "/v1/traces"

// Span is one span a Receiver got over OTLP/HTTP, flattened for assertions.
// Ids are hex; ParentID is "" for a root span.
type Span struct {
	Name, TraceID, SpanID, ParentID string
	Attrs                           map[string]string // values printed with %v
	Resource                        map[string]string
	Error                           bool   // status code Error
	StatusMessage                   string // its description
	Links                           []SpanLink
	Start, End                      time.Time
}

// SpanLink is a link from a Span to another span.
type SpanLink struct{ TraceID, SpanID string }

// Spans decodes every OTLP/HTTP protobuf trace export the receiver accepted
// (posts to OTLPTracesPath, gzip or not), failing t on one it cannot read.
func (r *Receiver) Spans(t testing.TB) []Span {
	t.Helper()
	var out []Span
	for _, q := range r.Delivered(OTLPTracesPath) {
		body := q.Body
		if q.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("testkit: OTLP export: %v", err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatalf("testkit: OTLP export: %v", err)
			}
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Fatalf("testkit: OTLP export is not an ExportTraceServiceRequest (Content-Type %q): %v", q.Header.Get("Content-Type"), err)
		}
		for _, rs := range req.GetResourceSpans() {
			res := attrMap(rs.GetResource().GetAttributes())
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					out = append(out, spanOf(s, res))
				}
			}
		}
	}
	return out
}

func spanOf(s *tracepb.Span, res map[string]string) Span {
	sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
		ParentID: hex.EncodeToString(s.GetParentSpanId()), Attrs: attrMap(s.GetAttributes()), Resource: res,
		Error:         s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
		StatusMessage: s.GetStatus().GetMessage(),
		Start:         time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano()))}
	for _, l := range s.GetLinks() {
		sp.Links = append(sp.Links, SpanLink{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
	}
	return sp
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.GetStringValue()
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(v.GetBoolValue())
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = fmt.Sprint(v.GetDoubleValue())
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}
