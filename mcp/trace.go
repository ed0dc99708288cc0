package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/mcpgate/mcpgate"
)

// traceMeta is the trace context a client may send in params._meta.
type traceMeta struct {
	Meta struct {
		Traceparent string `json:"traceparent"`
		Tracestate  string `json:"tracestate"`
	} `json:"_meta"`
}

// startSpan begins request m's span, joined to the trace the client sent
// (the traceparent header, else params._meta.traceparent). Without
// tracing it returns the request's context and does nothing else.
func (s *Server) startSpan(r *http.Request, ls *liveSession, agent *mcpgate.Agent, m *message) (context.Context, mcpgate.Span) {
	if !s.traced {
		return s.tracer.Start(r.Context(), m.method)
	}
	tp, ts := r.Header.Get("traceparent"), r.Header.Get("tracestate")
	if tp == "" {
		var p traceMeta
		if json.Unmarshal(m.Params, &p) == nil {
			tp, ts = p.Meta.Traceparent, p.Meta.Tracestate
		}
	}
	ctx := s.tracer.Join(r.Context(), tp, ts)
	return s.tracer.Start(ctx, m.method,
		slog.String(mcpgate.SpanKindKey, mcpgate.SpanServer),
		slog.String("mcp.method.name", m.method),
		slog.String("mcp.session.id", ls.id),
		slog.String("mcp.protocol.version", ls.version),
		slog.String("jsonrpc.request.id", string(m.ID)),
		slog.String("mcpgate.agent.id", agent.ID),
	)
}

// endSpan ends a request's span with what the access log says of it:
// the tool, and an error type and JSON-RPC code when it failed. The
// arguments never go into a span. A tools/call span of a tool the agent
// has is named "tools/call <tool>", as OpenTelemetry's MCP conventions
// ask; one of an unknown tool keeps the method's name alone, so that
// clients cannot make span names without bound.
func (s *Server) endSpan(span mcpgate.Span, a *access) {
	if !s.traced {
		span.End(nil)
		return
	}
	if a.tool != "" {
		span.SetAttributes(slog.String("gen_ai.tool.name", a.tool), slog.String("gen_ai.operation.name", "execute_tool"))
		if mcpgate.ErrorCode(a.err) != mcpgate.ENOTFOUND {
			span.SetName("tools/call " + a.tool)
		}
	}
	switch {
	case a.err != nil:
		span.SetAttributes(slog.String("rpc.response.status_code", strconv.Itoa(toRPCError(a.err).Code)))
	case a.cancelled:
		span.SetAttributes(slog.String("error.type", "cancelled"))
	case a.toolError != "":
		span.SetAttributes(slog.String("error.type", "tool_error"))
	}
	span.End(a.err)
}
