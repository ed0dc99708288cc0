package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/metrics"
)

// fakeReadiness is a replica's state as the probes see it.
type fakeReadiness struct{ draining, loaded bool }

func (f fakeReadiness) Draining() bool { return f.draining }
func (f fakeReadiness) Loaded() bool   { return f.loaded }

// pingDown is a database that does not answer.
type pingDown struct{ pingOK }

func (pingDown) Ping(context.Context) error { return errors.New("connection refused") }

// TestProbes: /healthz is liveness (the database answers) and reports
// draining; /readyz is 200 only when the database answers, the tables
// have loaded and the replica is not draining; both answer whatever the
// Host (probes reach a replica by its address), and a GET on the MCP
// endpoint is refused with Retry-After while draining.
func TestProbes(t *testing.T) {
	for _, tt := range []struct {
		name          string
		store         Store
		ready         Readiness
		health, readz int
		body          string // of /readyz
		mcpGet        int
	}{
		{"ready", pingOK{}, fakeReadiness{loaded: true}, 200, 200, `"ok"`, http.StatusUnauthorized},
		{"no readiness", pingOK{}, nil, 200, 200, `"ok"`, http.StatusUnauthorized},
		{"loading", pingOK{}, fakeReadiness{}, 200, 503, `"loading"`, http.StatusUnauthorized},
		{"draining", pingOK{}, fakeReadiness{draining: true, loaded: true}, 503, 503, `"draining"`, http.StatusServiceUnavailable},
		{"database down", pingDown{}, fakeReadiness{loaded: true}, 503, 503, `"unavailable"`, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(&Options{Store: tt.store, Metrics: metrics.New(), PublicURL: "https://mcp.example.com", Readiness: tt.ready, Auth: noAuth{}})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			probe := func(path string) *reply {
				req, err := http.NewRequest(http.MethodGet, hs.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = "10.1.2.3:8094" // not the public host
				return doRequest(t, req)
			}
			if r := probe("/healthz"); r.status != tt.health {
				t.Errorf("/healthz: HTTP %d %s, want %d", r.status, r.body, tt.health)
			}
			if r := probe("/readyz"); r.status != tt.readz || !strings.Contains(r.body, tt.body) {
				t.Errorf("/readyz: HTTP %d %s, want %d with %s", r.status, r.body, tt.readz, tt.body)
			}
			req, _ := http.NewRequest(http.MethodGet, hs.URL+"/shop/mcp", nil)
			req.Host = "mcp.example.com"
			r := doRequest(t, req)
			if r.status != tt.mcpGet || (tt.mcpGet == 503 && r.header.Get("Retry-After") == "") {
				t.Errorf("GET /shop/mcp: HTTP %d %s (Retry-After %q), want %d", r.status, r.body, r.header.Get("Retry-After"), tt.mcpGet)
			}
		})
	}
}

// noAuth refuses every credential.
type noAuth struct{}

func (noAuth) Authenticate(*http.Request) (*mcpgate.Credential, error) {
	return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "no credential")
}
