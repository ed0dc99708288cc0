package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// spanKey is the context key of a fakeTracer's current span name.
type spanKey struct{}

// fakeTracer records each span as "name < parent [error.type]".
type fakeTracer struct {
	mcpgate.NopTracer
	mu    sync.Mutex
	spans []string
}

func (f *fakeTracer) Start(ctx context.Context, name string, _ ...slog.Attr) (context.Context, mcpgate.Span) {
	parent, _ := ctx.Value(spanKey{}).(string)
	return context.WithValue(ctx, spanKey{}, name), &fakeSpan{f: f, line: name + " < " + parent}
}

// fakeSpan is a span of a fakeTracer.
type fakeSpan struct {
	f       *fakeTracer
	line    string
	errType string
}

func (s *fakeSpan) SetAttributes(attrs ...slog.Attr) {
	for _, a := range attrs {
		if a.Key == "error.type" {
			s.errType = a.Value.String()
		}
	}
}

func (s *fakeSpan) SetName(string) {}

func (s *fakeSpan) End(err error) {
	if err != nil {
		s.errType = mcpgate.ErrorCode(err)
	}
	line := s.line
	if s.errType != "" {
		line += " [" + s.errType + "]"
	}
	s.f.mu.Lock()
	s.f.spans = append(s.f.spans, line)
	s.f.mu.Unlock()
}

// Each stage that does work runs in a span of its own under the
// request's span, and the backend's span is the dispatch's child.
func TestStageSpans(t *testing.T) {
	tests := []struct {
		name, tool, args string
		want             []string
	}{
		{"keyed call", "echo", `{"q":"hi","idempotency_key":"k-1"}`, []string{
			"mcpgate.rate_limit < call", "mcpgate.idempotency < call", "mcpgate.validate < call",
			"backend rest < mcpgate.dispatch", "mcpgate.dispatch < call", "mcpgate.record < call",
		}},
		{"invalid arguments", "order", `{}`, []string{
			"mcpgate.rate_limit < call", "mcpgate.validate < call [tool_error]", "mcpgate.record < call",
		}},
		{"gated tool", "delete", `{"q":"x"}`, []string{
			"mcpgate.rate_limit < call", "mcpgate.validate < call", "mcpgate.approval < call [tool_error]", "mcpgate.record < call",
		}},
		{"unknown tool", "nope", `{}`, []string{"mcpgate.record < call"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &fakeTracer{}
			h := newHarness(t, nil)
			h.p = New(&Options{
				Tables: mustRegistry(t), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
				Idempotency: &memKeys{rows: map[string]*mcpgate.IdempotencyClaim{}}, Tracer: tr,
			})
			ctx := context.WithValue(context.Background(), spanKey{}, "call")
			h.keyedCall(ctx, tt.tool, tt.args)
			if diff := cmp.Diff(tt.want, tr.spans); diff != "" {
				t.Errorf("spans (-want +got):\n%s", diff)
			}
		})
	}
}

// A backend span names the server of the skill's URL, never its user
// info or path, and the method of a REST or relayed tool.
func TestBackendAttrs(t *testing.T) {
	rest := &mcpgate.Skill{Name: "crm", Kind: mcpgate.SkillREST, BaseURL: "https://user:secret@api.example.test:8443/v1"}
	relay := &mcpgate.Skill{Name: "up", Kind: mcpgate.SkillMCP, Command: "/bin/server"}
	tests := []struct {
		e    *registry.Entry
		want map[string]string
	}{
		{&registry.Entry{Skill: rest, Tool: &mcpgate.Tool{Name: "t", Request: &mcpgate.Request{Method: "POST"}}, Name: "t"}, map[string]string{
			"span.kind": "client", "mcpgate.skill.kind": "rest", "mcpgate.skill.name": "crm", "gen_ai.tool.name": "t",
			"http.request.method": "POST", "server.address": "api.example.test", "server.port": "8443",
		}},
		{&registry.Entry{Skill: relay, Tool: &mcpgate.Tool{Name: "p"}, Name: "up_p"}, map[string]string{
			"span.kind": "client", "mcpgate.skill.kind": "mcp", "mcpgate.skill.name": "up", "gen_ai.tool.name": "up_p",
			"mcp.method.name": "tools/call",
		}},
	}
	for _, tt := range tests {
		got := map[string]string{}
		for _, a := range backendAttrs(tt.e) {
			got[a.Key] = a.Value.String()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("attributes (-want +got):\n%s", diff)
		}
	}
}
