package main

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// TestFrontServesCallsItself: the gateway's listener is served by h1's
// server, which answers the MCP POSTs itself and hands a GET's connection
// to net/http, both answering as they should; /metrics counts both.
func TestFrontServesCallsItself(t *testing.T) {
	g := mustStartGateway(t)
	_, secret := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(secret), "2025-11-25")
	if res, text := s.call(t, "echo", `{"text":"hi"}`).mustToolResult(t); res.IsError {
		t.Fatalf("the call failed: %s", text)
	}
	if n := g.http.fast.Served(); n < 3 { // initialize, initialized, the call
		t.Errorf("h1 served %d requests, want the session's 3 at least", n)
	}
	handed := g.http.fast.HandedOver()
	if r := send(t, http.MethodGet, g.URL()+"/healthz", nil, ""); r.status != http.StatusOK {
		t.Errorf("GET /healthz through net/http: HTTP %d", r.status)
	}
	if n := g.http.fast.HandedOver(); n <= handed {
		t.Errorf("the GET's connection was not handed to net/http (%d hand-overs, %d before)", n, handed)
	}
	metrics := send(t, http.MethodGet, g.URL()+"/metrics", nil, "").body
	for name, least := range map[string]int{"mcpgate_http_front_requests_total": 3, "mcpgate_http_front_handovers_total": 1} {
		m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindStringSubmatch(metrics)
		if m == nil {
			t.Errorf("/metrics lacks %s", name)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n < least {
			t.Errorf("%s %d, want at least %d", name, n, least)
		}
	}
}
