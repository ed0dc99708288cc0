package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pipeline"
	"github.com/mcpgate/mcpgate/ratelimit"
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
	s, err := New(&Options{Tables: tables, Caller: pipe, Metrics: handsAIMetrics{}, PublicURL: "http://127.0.0.1:8094",
		Auth: handsAIAuth{"alice": handsAIAlice}})
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

// TestAPIErrorRetryAfter checks that a management API error carrying a
// retry time is 429 with Retry-After.
func TestAPIErrorRetryAfter(t *testing.T) {
	s := &Server{}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api/v1/agents", nil)
	s.writeAPIError(w, r, &mcpgate.Error{Code: mcpgate.ERATELIMIT, Message: "slow down", RetryAfterMS: 1001})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "2" {
		t.Fatalf("HTTP %d, Retry-After %q; want 429 and 2", w.Code, w.Header().Get("Retry-After"))
	}
}

// TestAPISkillRateLimit checks that a skill's and a tool's rate_limit are
// written and read over /api/v1, and a bad one is refused naming it.
func TestAPISkillRateLimit(t *testing.T) {
	f := mustAPIFixture(t)
	body := `{"name":"metered","base_url":"https://api.example.com","rate_limit":{"per_minute":60,"burst":10},"tools":[` +
		`{"name":"t","input_schema":{"type":"object"},"request":{"path":"/"},"rate_limit":{"per_minute":5,"burst":1}}]}`
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, body).want(t, http.StatusCreated)
	var sk struct {
		RateLimit *mcpgate.RateLimit `json:"rate_limit"`
		Tools     []struct {
			RateLimit *mcpgate.RateLimit `json:"rate_limit"`
		}
	}
	f.call(t, "GET", "/api/v1/agents/shop/skills/metered", f.alice, "").want(t, http.StatusOK).decode(t, &sk)
	if sk.RateLimit == nil || *sk.RateLimit != (mcpgate.RateLimit{PerMinute: 60, Burst: 10}) ||
		len(sk.Tools) != 1 || sk.Tools[0].RateLimit == nil || *sk.Tools[0].RateLimit != (mcpgate.RateLimit{PerMinute: 5, Burst: 1}) {
		t.Errorf("skill read back: %+v", sk)
	}
	bad := `{"name":"x","base_url":"https://api.example.com","rate_limit":{"per_minute":60,"burst":0},"tools":[` + toolJSON("t") + `]}`
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, bad).wantError(t, http.StatusBadRequest, "invalid", "rate_limit.burst", "positive integer")
}
