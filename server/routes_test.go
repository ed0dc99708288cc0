package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/metrics"
)

// pingOK is a database that always answers and has no users.
type pingOK struct{}

func (pingOK) Ping(context.Context) error { return nil }

func (pingOK) FindUserByID(context.Context, string) (*mcpgate.User, error) {
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no users")
}

// TestMountedAPI: the management API gets every path under /api/v1/,
// behind the Host/Origin guard; without one those paths are not found.
func TestMountedAPI(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(r.Method + " " + r.URL.Path))
	})
	for _, tt := range []struct {
		name, method, path, host string
		api                      http.Handler
		status                   int
		body                     string
	}{
		{"route", "GET", "/api/v1/agents", "", api, http.StatusTeapot, "GET /api/v1/agents"},
		{"any method and path", "PUT", "/api/v1/nope/x", "", api, http.StatusTeapot, "PUT /api/v1/nope/x"},
		{"foreign Host", "GET", "/api/v1/agents", "evil.example", api, http.StatusForbidden, ""},
		{"no API", "GET", "/api/v1/agents", "", nil, http.StatusNotFound, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(&Options{Store: pingOK{}, Metrics: metrics.New(), PublicURL: "http://127.0.0.1:1", API: tt.api})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			req, err := http.NewRequest(tt.method, hs.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			r := doRequest(t, req)
			if r.status != tt.status || (tt.body != "" && r.body != tt.body) {
				t.Errorf("HTTP %d %q, want %d %q", r.status, r.body, tt.status, tt.body)
			}
		})
	}
}

// fakeUI is a dashboard that names the path it got.
type fakeUI struct{}

func (fakeUI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusTeapot)
	_, _ = w.Write([]byte("ui " + r.URL.Path))
}

func (fakeUI) Paths() []string { return []string{"/ui/{$}", "/ui/agents/"} }

// TestMountedUI: the dashboard gets its paths behind the Host/Origin
// guard, and /ui/mcp stays an agent's MCP endpoint pattern rather than
// clashing with the dashboard's (ServeMux would panic on an overlap).
func TestMountedUI(t *testing.T) {
	srv, err := New(&Options{Store: pingOK{}, Metrics: metrics.New(), PublicURL: "http://127.0.0.1:1", UI: fakeUI{}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, tt := range []struct {
		path, host string
		status     int
		body       string
	}{
		{"/ui/", "", http.StatusTeapot, "ui /ui/"},
		{"/ui/agents/x/", "", http.StatusTeapot, "ui /ui/agents/x/"},
		{"/ui/", "evil.example", http.StatusForbidden, ""},
		{"/ui/nope/", "", http.StatusNotFound, ""},
	} {
		req, err := http.NewRequest("GET", hs.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.host != "" {
			req.Host = tt.host
		}
		r := doRequest(t, req)
		if r.status != tt.status || (tt.body != "" && r.body != tt.body) {
			t.Errorf("%s (Host %q): HTTP %d %q, want %d %q", tt.path, tt.host, r.status, r.body, tt.status, tt.body)
		}
	}
}
