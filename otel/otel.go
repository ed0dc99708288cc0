// Package otel exports the gateway's traces with the OpenTelemetry SDK:
// an mcpgate.Tracer whose spans go to an OTLP/HTTP collector, with W3C
// trace context (traceparent, tracestate) for propagation.
//
// Only cmd/mcpgate builds one; everything else sees mcpgate.Tracer. It
// must not import the gateway's other packages.
package otel

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate"
)

// Options configure a Tracer.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP traces URL, such as
	// http://127.0.0.1:4318/v1/traces. Required.
	Endpoint string
	// ServiceName names the gateway in its spans (default "mcpgate").
	ServiceName string
	// Headers go with every export (from OTEL_EXPORTER_OTLP_HEADERS).
	Headers map[string]string
	// BatchTimeout is how long spans wait to be exported together
	// (default the SDK's 5s).
	BatchTimeout time.Duration
}

// Tracer is an mcpgate.Tracer exporting its spans. Shutdown flushes them.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
}

var _ mcpgate.Tracer = (*Tracer)(nil)

// New returns a Tracer exporting to opts.Endpoint.
func New(ctx context.Context, opts Options) (*Tracer, error) {
	exp, err := otlptracehttp.New(ctx, exporterOptions(opts)...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	name := opts.ServiceName
	if name == "" {
		name = "mcpgate"
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(mcpgate.Version))
	var batch []sdktrace.BatchSpanProcessorOption
	if opts.BatchTimeout > 0 {
		batch = append(batch, sdktrace.WithBatchTimeout(opts.BatchTimeout))
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, batch...), sdktrace.WithResource(res))
	return &Tracer{provider: p, tracer: p.Tracer("github.com/mcpgate/mcpgate"), prop: propagation.TraceContext{}}, nil
}

// exporterOptions turns Options into the OTLP exporter's.
func exporterOptions(opts Options) []otlptracehttp.Option {
	out := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(opts.Endpoint)}
	if len(opts.Headers) > 0 {
		out = append(out, otlptracehttp.WithHeaders(opts.Headers))
	}
	return out
}

// Shutdown exports the spans still queued and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// Start begins a span, a child of ctx's.
func (t *Tracer) Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, mcpgate.Span) {
	ctx, s := t.tracer.Start(ctx, name, trace.WithAttributes(convert(attrs)...), trace.WithSpanKind(kindOf(attrs)))
	return ctx, span{s}
}

// kindOf returns the span kind attrs name with mcpgate.SpanKindKey.
func kindOf(attrs []slog.Attr) trace.SpanKind {
	for _, a := range attrs {
		if a.Key != mcpgate.SpanKindKey {
			continue
		}
		switch a.Value.String() {
		case mcpgate.SpanServer:
			return trace.SpanKindServer
		case mcpgate.SpanClient:
			return trace.SpanKindClient
		}
	}
	return trace.SpanKindInternal
}

// Join returns ctx with the remote span context a traceparent names.
func (t *Tracer) Join(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return t.prop.Extract(ctx, &mcpgate.TraceContext{Parent: traceparent, State: tracestate})
}

// Traceparent returns the W3C trace context of ctx's span.
func (t *Tracer) Traceparent(ctx context.Context) (traceparent, tracestate string) {
	c := &mcpgate.TraceContext{}
	t.prop.Inject(ctx, c)
	return c.Parent, c.State
}

// TraceID returns ctx's trace id in hex, or "".
func (t *Tracer) TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// span adapts an SDK span.
type span struct{ s trace.Span }

// SetAttributes adds attributes.
func (s span) SetAttributes(attrs ...slog.Attr) { s.s.SetAttributes(convert(attrs)...) }

// SetName renames the span.
func (s span) SetName(name string) { s.s.SetName(name) }

// End ends the span, with an error status and error.type when err is set.
func (s span) End(err error) {
	if err != nil {
		s.s.SetAttributes(attribute.String("error.type", mcpgate.ErrorCode(err)))
		s.s.SetStatus(codes.Error, mcpgate.ErrorMessage(err))
	}
	s.s.End()
}

// convert turns slog attributes into OpenTelemetry ones.
func convert(attrs []slog.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		if a.Key == mcpgate.SpanKindKey {
			continue
		}
		v := a.Value.Resolve()
		switch v.Kind() {
		case slog.KindInt64:
			out = append(out, attribute.Int64(a.Key, v.Int64()))
		case slog.KindBool:
			out = append(out, attribute.Bool(a.Key, v.Bool()))
		case slog.KindFloat64:
			out = append(out, attribute.Float64(a.Key, v.Float64()))
		default:
			out = append(out, attribute.String(a.Key, v.String()))
		}
	}
	return out
}
