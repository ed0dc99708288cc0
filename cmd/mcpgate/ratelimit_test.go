package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func TestRateLimitFlag(t *testing.T) {
	for _, c := range []struct {
		value string
		want  *mcpgate.RateLimit
		ok    bool
	}{
		{"60", &mcpgate.RateLimit{PerMinute: 60, Burst: 60}, true},
		{"60:10", &mcpgate.RateLimit{PerMinute: 60, Burst: 10}, true},
		{"", nil, true},
		{"0", nil, false},
		{"60:0", nil, false},
		{"fast", nil, false},
		{"60:x", nil, false},
	} {
		var f rateLimitFlag
		err := f.Set(c.value)
		if (err == nil) != c.ok || (c.ok && (f.limit == nil) != (c.want == nil)) || (c.want != nil && f.limit != nil && *f.limit != *c.want) {
			t.Errorf("Set(%q) = %v, %+v; want %+v, ok %v", c.value, err, f.limit, c.want, c.ok)
		}
	}
}

// TestDefaultRateLimit starts a gateway with MCPGATE_RATE_LIMIT-style
// --rate-limit 1:2: two calls of a caller pass, the third is refused with
// the gateway's error data and the time until a token is free, and another
// agent has a budget of its own.
func TestDefaultRateLimit(t *testing.T) {
	g := mustStartGateway(t, "--rate-limit", "1:2")
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	for range 2 {
		if r := s.call(t, "echo", `{"text":"hi"}`); r.rpc.Error != nil {
			t.Fatalf("call under the limit: %s", r.body)
		}
	}
	r := s.call(t, "echo", `{"text":"hi"}`)
	var refused struct {
		Error struct {
			Code int
			Data struct {
				Reason       string
				Status       int
				RetryAfterMS int64 `json:"retry_after_ms"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.body), &refused); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	d := refused.Error.Data
	if refused.Error.Code != -32000 || d.Reason != "rate_limited" || d.Status != 429 || d.RetryAfterMS < 50000 || d.RetryAfterMS > 60000 {
		t.Fatalf("third call: %s", r.body)
	}
	other := g.mustInitialize(t, "backoffice", bearer(oag), "2025-11-25")
	if r := other.call(t, "echo", `{}`); r.rpc.Error != nil {
		t.Fatalf("another agent: %s", r.body)
	}
}

// BenchmarkToolsCallRateLimited is BenchmarkToolsCall's serial run with a
// default rate limit that is never reached, so every call passes the check.
func BenchmarkToolsCallRateLimited(b *testing.B) {
	g := mustStartMain(b, benchConfig, "--rate-limit", "1000000000:1000000000")
	_, oag := g.mustKey(b, "alice", "")
	s := g.mustInitialize(b, "bench", bearer(oag), "2025-11-25")
	h := s.sessionHeader(headers("Content-Type", "application/json", "Accept", "application/json"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	b.ReportAllocs()
	var id int64
	for b.Loop() {
		id++
		if err := postCall(client, s.url, h, id); err != nil {
			b.Fatal(err)
		}
	}
}
