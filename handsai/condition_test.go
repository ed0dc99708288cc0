package handsai

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pipeline"
	"github.com/mcpgate/mcpgate/server"
)

// TestHandsAIIdempotencyConditions checks that an idempotency key in flight
// is HTTP 409 and a key reused for another call HTTP 422, each with the MCP
// endpoint's error (-32000, data {reason, status}) and the pipeline's
// message, not -32603.
func TestHandsAIIdempotencyConditions(t *testing.T) {
	caller := &handsAICaller{answers: map[string]handsAIAnswer{
		"busy":   {err: mcpgate.Errorf(mcpgate.ECONFLICT, "a call with idempotency key %q is still in flight", "k")},
		"reused": {err: mcpgate.Errorf(mcpgate.EMISMATCH, "idempotency key %q was used for another call", "k")},
	}}
	tables := mustHandsAIRegistry(t, newHandsAIAgent("crm", "alice", "busy", "reused"))
	pipe := pipeline.New(&pipeline.Options{Tables: tables, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: caller}})
	s, err := server.New(&server.Options{Tables: tables, HandsAI: New(&Options{Tables: tables, Caller: pipe}), Metrics: handsAIMetrics{},
		PublicURL: "http://127.0.0.1:8094", Auth: handsAIAuth{"alice": handsAIAlice}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	h := &handsAITest{url: srv.URL}
	for _, tt := range []struct {
		tool   string
		status int
		want   string
	}{
		{"busy", http.StatusConflict, `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"a call with idempotency key \"k\" is still in flight","data":{"reason":"conflict","status":409}}}`},
		{"reused", http.StatusUnprocessableEntity, `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"idempotency key \"k\" was used for another call","data":{"reason":"idempotency_mismatch","status":422}}}`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			status, hdr, body := h.post(t, "/mcp/tools/call", "alice", handsAICallBody(`7`, tt.tool, `{}`))
			if status != tt.status || hdr.Get("Retry-After") != "" {
				t.Errorf("HTTP %d, Retry-After %q; want %d and none", status, hdr.Get("Retry-After"), tt.status)
			}
			mustEqualHandsAIJSON(t, tt.want, body)
		})
	}
}
