package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
)

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
