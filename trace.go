package mcpgate

import (
	"context"
	"log/slog"
)

// Tracer starts the spans of the gateway's traces. Implementations export
// them (package otel); NopTracer, used when tracing is off, does nothing
// and allocates nothing. Attributes never carry argument values or
// secrets.
type Tracer interface {
	// Start begins a span named name, a child of ctx's span, and returns
	// ctx carrying it.
	Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, Span)
	// Join returns ctx joined to the remote trace a W3C traceparent (and
	// tracestate) names; invalid or empty values leave ctx as it is.
	Join(ctx context.Context, traceparent, tracestate string) context.Context
	// Traceparent returns the W3C traceparent and tracestate of ctx's
	// span, for a backend; both are empty without one.
	Traceparent(ctx context.Context) (traceparent, tracestate string)
	// TraceID returns the hex trace id of ctx's span, or "".
	TraceID(ctx context.Context) string
}

// SpanKindKey is the attribute with which a caller of Tracer.Start says
// what kind of span it begins, as OpenTelemetry's span kinds: SpanServer
// for a request the gateway serves, SpanClient for a call it makes to a
// backend. A span without it is internal. Tracers take it out of the
// span's attributes.
const SpanKindKey = "span.kind"

// The values of SpanKindKey.
const (
	SpanServer = "server"
	SpanClient = "client"
)

// Span is one timed operation of a trace.
type Span interface {
	// SetAttributes adds attributes to the span.
	SetAttributes(attrs ...slog.Attr)
	// SetName renames the span, once what names it is known.
	SetName(name string)
	// End ends the span, marking it failed when err is not nil.
	End(err error)
}

// NopTracer is the Tracer of a gateway without tracing.
type NopTracer struct{}

// Start returns ctx and a span that does nothing.
func (NopTracer) Start(ctx context.Context, _ string, _ ...slog.Attr) (context.Context, Span) {
	return ctx, nopSpan{}
}

// Join returns ctx.
func (NopTracer) Join(ctx context.Context, _, _ string) context.Context { return ctx }

// Traceparent returns empty strings.
func (NopTracer) Traceparent(context.Context) (string, string) { return "", "" }

// TraceID returns "".
func (NopTracer) TraceID(context.Context) string { return "" }

type nopSpan struct{}

func (nopSpan) SetAttributes(...slog.Attr) {}
func (nopSpan) SetName(string)             {}
func (nopSpan) End(error)                  {}

// TraceContext is a W3C trace context: the traceparent and tracestate
// headers' values.
type TraceContext struct {
	Parent string `json:"traceparent,omitempty"`
	State  string `json:"tracestate,omitempty"`
}

// SetHeaders sets the traceparent and tracestate headers of h (an
// http.Header or the like) when the context is not empty.
func (tc TraceContext) SetHeaders(set func(key, value string)) {
	if tc.Parent == "" {
		return
	}
	set("traceparent", tc.Parent)
	if tc.State != "" {
		set("tracestate", tc.State)
	}
}

// Get returns the value of the traceparent or tracestate header. With Set
// and Keys it makes a *TraceContext an OpenTelemetry TextMapCarrier, so
// that an agent worker joins a chat_message's trace with
// propagation.TraceContext{}.Extract(ctx, &msg.Trace).
func (tc *TraceContext) Get(key string) string {
	switch key {
	case "traceparent":
		return tc.Parent
	case "tracestate":
		return tc.State
	}
	return ""
}

// Set sets the traceparent or tracestate header's value; other keys are
// ignored.
func (tc *TraceContext) Set(key, value string) {
	switch key {
	case "traceparent":
		tc.Parent = value
	case "tracestate":
		tc.State = value
	}
}

// Keys names the two headers a TraceContext holds.
func (tc *TraceContext) Keys() []string { return []string{"traceparent", "tracestate"} }
