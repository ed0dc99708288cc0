package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// patternEcho answers with the pattern it was registered for and the
// agent path value.
func patternEcho(pattern string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(pattern + " " + r.PathValue("agent")))
	})
}

// gatewayLikeMux registers patterns like the gateway's route table, and a
// literal one more specific than the MCP pattern.
func gatewayLikeMux(extra ...string) *routeMux {
	m := newRouteMux()
	for _, p := range append([]string{
		"GET /healthz", "GET /readyz", "GET /metrics", mcpPattern, "/api/v1/",
		"POST /mcp/tools/list", "POST /mcp/tools/call", "/ui/{$}", "/ui/static/", "/ui/agents/",
		"GET /.well-known/oauth-protected-resource/{agent}/mcp", "OPTIONS /.well-known/oauth-protected-resource/{agent}/mcp",
		"POST /oauth/token", "/special/mcp", "/",
	}, extra...) {
		m.Handle(p, patternEcho(p))
	}
	return m
}

// TestRouteMuxShortcut: whenever the shortcut serves a request, the
// ServeMux would have chosen the MCP pattern and the same agent; and it
// serves the common case.
func TestRouteMuxShortcut(t *testing.T) {
	m := gatewayLikeMux()
	requests := []struct{ method, target string }{
		{"POST", "/weather/mcp"}, {"GET", "/weather/mcp"}, {"DELETE", "/a-b_c.1/mcp"},
		{"POST", "/special/mcp"}, {"POST", "/ui/mcp"}, {"POST", "/api/mcp"}, {"POST", "/mcp/mcp"},
		{"POST", "/healthz/mcp"}, {"POST", "//mcp"}, {"POST", "/./mcp"}, {"POST", "/../mcp"},
		{"POST", "/a/b/mcp"}, {"POST", "/a%2Fb/mcp"}, {"POST", "/a%20b/mcp"}, {"POST", "/weather/mcp/"},
		{"POST", "/weather/mcpx"}, {"POST", "/mcp"}, {"POST", "/"}, {"GET", "/healthz"},
	}
	served := 0
	for _, q := range requests {
		r := httptest.NewRequest(q.method, q.target, nil)
		agent, ok := m.mcpAgent(r)
		_, pattern := m.mux.Handler(r)
		if !ok {
			continue
		}
		served++
		if pattern != mcpPattern {
			t.Errorf("%s %s: the shortcut serves it, the mux chooses %q", q.method, q.target, pattern)
			continue
		}
		w := httptest.NewRecorder()
		m.mux.ServeHTTP(w, r)
		if want := mcpPattern + " " + agent; w.Body.String() != want {
			t.Errorf("%s %s: the shortcut's agent is %q, the mux answers %q", q.method, q.target, agent, w.Body.String())
		}
	}
	if served != 4 {
		t.Errorf("the shortcut served %d of the requests, want 4 (the first three, and /a%%20b/mcp)", served)
	}
	w := httptest.NewRecorder()
	m.ServeHTTP(w, httptest.NewRequest("POST", "/weather/mcp", nil))
	if got, want := w.Body.String(), mcpPattern+" weather"; got != want {
		t.Errorf("served %q, want %q", got, want)
	}
}

// TestRouteMuxShortcutOff: a pattern that starts with a wildcard or names
// a host could take an MCP path; the shortcut is then never taken.
func TestRouteMuxShortcutOff(t *testing.T) {
	for _, extra := range []string{"GET /{x}/status", "other.example/"} {
		m := gatewayLikeMux(extra)
		if _, ok := m.mcpAgent(httptest.NewRequest("POST", "/weather/mcp", nil)); ok {
			t.Errorf("with %q registered, the shortcut was taken", extra)
		}
		w := httptest.NewRecorder()
		m.ServeHTTP(w, httptest.NewRequest("POST", "/weather/mcp", nil))
		if got, want := w.Body.String(), mcpPattern+" weather"; got != want {
			t.Errorf("with %q registered, served %q, want %q", extra, got, want)
		}
	}
}
