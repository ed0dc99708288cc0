package otel

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate"
)

// A span joined to a host's traceparent keeps its trace id and hands its
// own span id on, and an mcpgate.TraceContext serves the SDK's propagator
// as a carrier (as agent workers use it).
func TestJoinAndPropagate(t *testing.T) {
	tr, err := New(context.Background(), Options{Endpoint: "http://127.0.0.1:1/v1/traces"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	const host = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx, span := tr.Start(tr.Join(context.Background(), host, "vendor=x"), "tools/call")
	defer span.End(nil)
	parent, state := tr.Traceparent(ctx)
	if !strings.HasPrefix(parent, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || parent == host || state != "vendor=x" {
		t.Fatalf("Traceparent = %q, %q", parent, state)
	}
	tc := &mcpgate.TraceContext{Parent: parent, State: state}
	worker := propagation.TraceContext{}.Extract(context.Background(), tc)
	if got := tr.TraceID(worker); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the worker's trace id is %q", got)
	}
}

// The span kind attribute picks the span's kind and is no attribute of
// its own.
func TestSpanKind(t *testing.T) {
	for _, tt := range []struct {
		attrs []slog.Attr
		want  trace.SpanKind
	}{
		{[]slog.Attr{slog.String(mcpgate.SpanKindKey, mcpgate.SpanServer), slog.String("a", "b")}, trace.SpanKindServer},
		{[]slog.Attr{slog.String("a", "b"), slog.String(mcpgate.SpanKindKey, mcpgate.SpanClient)}, trace.SpanKindClient},
		{[]slog.Attr{slog.String("a", "b")}, trace.SpanKindInternal},
	} {
		if got := kindOf(tt.attrs); got != tt.want {
			t.Errorf("kindOf(%v) = %v, want %v", tt.attrs, got, tt.want)
		}
		if kv := convert(tt.attrs); len(kv) != 1 || kv[0].Key != "a" {
			t.Errorf("convert(%v) = %v, want a alone", tt.attrs, kv)
		}
	}
}
