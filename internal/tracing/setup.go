// Package tracing gives drover's dispatcher and notifier OpenTelemetry spans
// for a card's path (claim, workspace and hooks, agent run, classification,
// routing, notification delivery), exported over OTLP (HTTP or gRPC) when the standard
// OTEL_EXPORTER_OTLP_* variables ask for it and off otherwise.
//
// Off, nothing is installed: spans come from the global no-op tracer, record
// nothing and start no goroutine. See docs/design.md (a card's path) for the
// steps the spans follow and docs/guides/traces.md for the variables.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/drover-dev/drover/internal/version"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Enabled reports whether the environment asks for traces: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set,
// OTEL_SDK_DISABLED is not true and OTEL_TRACES_EXPORTER is not none.
func Enabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the global tracer provider with an OTLP exporter (HTTP, or
// gRPC when OTEL_EXPORTER_OTLP_PROTOCOL says grpc) when Enabled, and returns the function that flushes and removes it (call it on
// graceful stop). When not Enabled it installs nothing and shutdown does
// nothing. Export errors are logged on log as warnings; they never stop drover.
func Setup(ctx context.Context, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	if !Enabled() {
		return none, nil
	}
	grpc, err := checkEnv()
	if err != nil {
		return none, err
	}
	var exp sdktrace.SpanExporter
	if grpc {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return none, fmt.Errorf("traces: OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override drover's defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "drover"), attribute.String("service.version", version.Get().Version)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return none, fmt.Errorf("traces: OTEL_RESOURCE_ATTRIBUTES: %w (write key=value pairs separated by commas)", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(idGenerator{}))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("traces: export failed; drover keeps running", "err", err) }))
	otel.SetTracerProvider(tp)
	log.Info("traces: exporting spans over OTLP", "endpoint", endpoint(), "grpc", grpc)
	return func(ctx context.Context) error {
		err := tp.Shutdown(ctx)
		otel.SetTracerProvider(noop.NewTracerProvider())
		return err
	}, nil
}

// checkEnv refuses the settings drover cannot honour, naming the variable,
// and says whether the protocol is gRPC (else OTLP/HTTP).
func checkEnv() (grpc bool, err error) {
	if v := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); v != "" && v != "otlp" {
		return false, fmt.Errorf("traces: OTEL_TRACES_EXPORTER=%q: drover exports traces with otlp only; set it to otlp, or to none for no traces", v)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if err := checkEndpoint(k); err != nil {
			return false, err
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		// The traces-specific variable wins over the general one.
		switch v := strings.TrimSpace(os.Getenv(k)); v {
		case "":
			continue
		case "http/protobuf", "http/json":
			return false, nil
		case "grpc":
			return true, nil
		default:
			return false, fmt.Errorf("traces: %s=%q is not grpc, http/protobuf or http/json", k, v)
		}
	}
	return false, nil
}

// checkEndpoint refuses an endpoint variable that is set but is not an
// http or https URL with a host: the exporter would otherwise fall back to
// its default endpoint and send the spans where nobody asked.
func checkEndpoint(k string) error {
	v := strings.TrimSpace(os.Getenv(k))
	if v == "" {
		return nil
	}
	fix := "set it to the collector's URL, e.g. http://127.0.0.1:4318 (gRPC: http://127.0.0.1:4317), or unset it for no traces"
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("traces: %s is not a URL (%v): %s", k, redactedErr(err, v), fix)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("traces: %s=%q is not an http:// or https:// URL with a host: %s", k, u.Redacted(), fix)
	}
	return nil
}

// redactedErr is url.Parse's error without the value it quotes (it may
// carry credentials).
func redactedErr(err error, v string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return strings.ReplaceAll(err.Error(), v, "…")
}

// endpoint is the configured endpoint without credentials, for the
// start-up log line.
func endpoint() string {
	v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if v == "" {
		v = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	u, err := url.Parse(v)
	if err != nil {
		return "(not a URL)" // checkEnv refused it before
	}
	u.User = nil
	return u.Redacted()
}
