package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func TestGuard(t *testing.T) {
	tests := []struct {
		name      string
		publicURL string
		hosts     []string
		origins   []string
		host      string
		origin    string
		ok        bool
	}{
		{"own host", "http://127.0.0.1:8094", nil, nil, "127.0.0.1:8094", "", true},
		{"localhost on a loopback URL", "http://127.0.0.1:8094", nil, nil, "localhost:8094", "", true},
		{"ipv6 loopback", "http://127.0.0.1:8094", nil, nil, "[::1]:8094", "", true},
		{"host without port", "http://127.0.0.1:8094", nil, nil, "localhost", "", true},
		{"foreign host (DNS rebinding)", "http://127.0.0.1:8094", nil, nil, "evil.example.com", "", false},
		{"foreign host with our port", "http://127.0.0.1:8094", nil, nil, "evil.example.com:8094", "", false},
		{"public name", "https://mcp.example.com", nil, nil, "mcp.example.com", "", true},
		{"loopback not allowed behind a public URL", "https://mcp.example.com", nil, nil, "localhost", "", false},
		{"extra host", "https://mcp.example.com", []string{"gw.internal:8443"}, nil, "GW.internal:8443", "", true},
		{"local origin", "http://127.0.0.1:8094", nil, nil, "127.0.0.1:8094", "http://localhost:6274", true},
		{"foreign origin", "http://127.0.0.1:8094", nil, nil, "127.0.0.1:8094", "http://evil.example.com", false},
		{"null origin", "http://127.0.0.1:8094", nil, nil, "127.0.0.1:8094", "null", false},
		{"allowed origin", "https://mcp.example.com", nil, []string{"https://app.example.com"}, "mcp.example.com", "https://app.example.com", true},
		{"allowed origin, other scheme", "https://mcp.example.com", nil, []string{"https://app.example.com"}, "mcp.example.com", "http://app.example.com", false},
		{"own public origin", "https://mcp.example.com", nil, nil, "mcp.example.com", "https://mcp.example.com", true},
		{"own public host, other port", "https://mcp.example.com", nil, nil, "mcp.example.com", "http://mcp.example.com:8080", false},
		{"own public host, other scheme", "https://mcp.example.com", nil, nil, "mcp.example.com", "http://mcp.example.com", false},
		{"loopback origin behind a public URL", "https://mcp.example.com", nil, nil, "mcp.example.com", "http://localhost:6274", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := newGuard(tt.publicURL, tt.hosts, tt.origins)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("POST", "/a/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			err = g.check(r)
			if (err == nil) != tt.ok {
				t.Fatalf("check(Host %q, Origin %q) = %v, want ok=%v", tt.host, tt.origin, err, tt.ok)
			}
			if err != nil && mcpgate.ErrorCode(err) != mcpgate.EFORBIDDEN {
				t.Errorf("code = %s, want forbidden", mcpgate.ErrorCode(err))
			}
		})
	}
}

func TestGuardWrapRefusesWith403(t *testing.T) {
	g, _ := newGuard("http://127.0.0.1:8094", nil, nil)
	h := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("handler reached") }))
	r := httptest.NewRequest("POST", "/a/mcp", nil)
	r.Host = "evil.example.com"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("status = %d, want 403", w.Code)
	}
}

func TestNewGuardRejectsBadConfig(t *testing.T) {
	for _, tt := range []struct{ url, origin string }{
		{"127.0.0.1:8094", ""},
		{"ftp://x", ""},
		{"http://127.0.0.1:8094", "not an origin"},
	} {
		var origins []string
		if tt.origin != "" {
			origins = []string{tt.origin}
		}
		if _, err := newGuard(tt.url, nil, origins); mcpgate.ErrorCode(err) != mcpgate.EINVALID {
			t.Errorf("newGuard(%q, %q) = %v, want EINVALID", tt.url, tt.origin, err)
		}
	}
}

func TestPublicURLFor(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8094": "http://127.0.0.1:8094",
		"0.0.0.0:80":     "http://127.0.0.1:80",
		"[::]:8094":      "http://127.0.0.1:8094",
		":9000":          "http://127.0.0.1:9000",
		"[::1]:8094":     "http://[::1]:8094",
	} {
		if got := PublicURLFor(addr); got != want {
			t.Errorf("PublicURLFor(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestGuardCORS(t *testing.T) {
	g, _ := newGuard("http://127.0.0.1:8094", nil, nil)
	reached := false
	h := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))

	pre := httptest.NewRequest("OPTIONS", "/a/mcp", nil)
	pre.Host = "127.0.0.1:8094"
	pre.Header.Set("Origin", "http://localhost:6274")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, pre)
	if w.Code != http.StatusNoContent || reached {
		t.Fatalf("preflight: status %d, handler reached %v; want 204 answered by the guard", w.Code, reached)
	}
	for k, want := range map[string]string{
		"Access-Control-Allow-Origin":  "http://localhost:6274",
		"Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE",
		"Access-Control-Allow-Headers": corsHeaders,
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("preflight %s = %q, want %q", k, got, want)
		}
	}
	if allowed := w.Header().Get("Access-Control-Allow-Headers"); !strings.Contains(allowed, "Mcp-Method") || !strings.Contains(allowed, "Mcp-Name") {
		t.Errorf("preflight allows %q: a 2026-07-28 client needs Mcp-Method and Mcp-Name", allowed)
	}

	post := httptest.NewRequest("POST", "/a/mcp", nil)
	post.Host = "127.0.0.1:8094"
	post.Header.Set("Origin", "http://localhost:6274")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, post)
	if !reached || w.Header().Get("Access-Control-Expose-Headers") == "" {
		t.Errorf("request from an allowed origin: reached %v, headers %v", reached, w.Header())
	}
}
