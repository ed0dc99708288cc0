package server

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// patternEcho answers with the pattern it was registered for and the
// agent path value.
func patternEcho(pattern string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(pattern + " " + r.PathValue("agent")))
	})
}

// gatewayPatterns are patterns like the gateway's route table, with a
// literal one more specific than the MCP pattern (the last but one).
var gatewayPatterns = []string{
	"GET /healthz", "GET /readyz", "GET /metrics", mcpPattern, "/api/v1/",
	"POST /mcp/tools/list", "POST /mcp/tools/call", "/ui/{$}", "/ui/static/", "/ui/agents/",
	"GET /.well-known/oauth-protected-resource/{agent}/mcp", "OPTIONS /.well-known/oauth-protected-resource/{agent}/mcp",
	"GET /{agent}/mcp/.well-known/openid-configuration", "OPTIONS /{agent}/mcp/.well-known/oauth-authorization-server",
	"POST /oauth/token", "/special/mcp", "/",
}

// gatewayLikeMux registers gatewayPatterns and extra.
func gatewayLikeMux(extra ...string) *routeMux {
	return muxOf(append(gatewayPatterns, extra...))
}

// muxOf registers patterns, each answering with patternEcho.
func muxOf(patterns []string) *routeMux {
	m := newRouteMux()
	for _, p := range patterns {
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

// TestRouteMuxShortcutOff: a pattern that names a host, or starts with a
// wildcard and could match an MCP path, turns the shortcut off; one that
// starts with a wildcard but cannot match leaves it on.
func TestRouteMuxShortcutOff(t *testing.T) {
	for _, c := range []struct {
		extra string
		off   bool
	}{
		{"other.example/", true}, {"GET /{x}/mcp", true}, {"/{x}/{y}", true}, {"/{x}/", true},
		{"/{x}/{rest...}", true}, {"GET /{x}/%6Dcp", true},
		{"GET /{x}/status", false}, {"/{x}/mcp/", false}, {"/{x}/{$}", false}, {"/{x}/mcp/{y}", false},
		{"/{x}", false},
	} {
		// Without /special/mcp, which some of the extras would conflict with.
		base := slices.DeleteFunc(slices.Clone(gatewayPatterns), func(p string) bool { return p == "/special/mcp" })
		m := muxOf(append(base, c.extra))
		if _, ok := m.mcpAgent(httptest.NewRequest("POST", "/weather/mcp", nil)); ok == c.off {
			t.Errorf("with %q registered, the shortcut taken: %v, want %v", c.extra, ok, !c.off)
		}
		w := httptest.NewRecorder()
		m.ServeHTTP(w, httptest.NewRequest("POST", "/weather/mcp", nil))
		if _, pattern := m.mux.Handler(httptest.NewRequest("POST", "/weather/mcp", nil)); pattern != mcpPattern && !c.off {
			t.Errorf("with %q registered, the mux chooses %q, and the shortcut is on", c.extra, pattern)
		}
		if got, want := w.Body.String(), mcpPattern+" weather"; !c.off && got != want {
			t.Errorf("with %q registered, served %q, want %q", c.extra, got, want)
		}
	}
}

// TestServerTakesRouteShortcut: the gateway's own route table, OAuth
// included, leaves the MCP endpoint's shortcut on.
func TestServerTakesRouteShortcut(t *testing.T) {
	f := mustOAuthFixture(t)
	if agent, ok := f.srv.mux.mcpAgent(httptest.NewRequest("POST", "/shop/mcp", nil)); !ok || agent != "shop" {
		t.Fatalf("the shortcut gives %q, %v; want shop, true", agent, ok)
	}
}
