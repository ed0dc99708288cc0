package handsai

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pipeline"
	"github.com/mcpgate/mcpgate/ratelimit"
	"github.com/mcpgate/mcpgate/server"
)

// TestHandsAIRateLimited checks that a call refused by a rate limit is
// HTTP 429 with Retry-After in whole seconds, rounded up, and the MCP
// endpoint's error data, echoing the request's id.
func TestHandsAIRateLimited(t *testing.T) {
	tables := mustHandsAIRegistry(t, newHandsAIAgent("crm", "alice", "status"))
	pipe := pipeline.New(&pipeline.Options{
		Tables: tables, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: &handsAICaller{}},
		Limiter: ratelimit.NewMemory(nil), DefaultRateLimit: &mcpgate.RateLimit{PerMinute: 1, Burst: 1},
	})
	s, err := server.New(&server.Options{Tables: tables, HandsAI: New(&Options{Tables: tables, Caller: pipe}), Metrics: handsAIMetrics{},
		PublicURL: "http://127.0.0.1:8094", Auth: handsAIAuth{"alice": handsAIAlice}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	h := &handsAITest{url: srv.URL}
	if status, _, body := h.post(t, "/mcp/tools/call", "alice", handsAICallBody(`1`, "status", `{}`)); status != http.StatusOK {
		t.Fatalf("first call: HTTP %d %s", status, body)
	}
	status, hdr, body := h.post(t, "/mcp/tools/call", "alice", handsAICallBody(`"again"`, "status", `{}`))
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") != "60" {
		t.Fatalf("second call: HTTP %d, Retry-After %q; want 429 and 60", status, hdr.Get("Retry-After"))
	}
	var got struct {
		ID    string
		Error struct {
			Code int
			Data map[string]any
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	d := got.Error.Data
	if ms, _ := d["retry_after_ms"].(float64); got.ID != "again" || got.Error.Code != -32000 || d["reason"] != "rate_limited" || d["status"] != 429.0 || ms < 59000 || ms > 60000 {
		t.Errorf("body %s", body)
	}
}
