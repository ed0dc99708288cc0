package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/mcpgate/mcpgate/e2e/conformance"
)

// conformanceScenarios are the official MCP conformance suite's (0.1.16)
// server scenarios that do not need the suite's fixture tools, resources or
// prompts, which the demo agent does not have.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"tools-list",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// TestConformance runs those scenarios against the demo agent. The suite
// sends no credentials, so a proxy on loopback adds the key; it forwards the
// Host and Origin the suite sends untouched, so the gateway's own
// DNS-rebinding guard is what the suite tests.
func TestConformance(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	g := startGateway(t, nil, "--demo", "--data-dir", t.TempDir())
	key := mustMatch(t, keyLine, waitFor(t, g.stdout.String, "Claude Desktop"))
	proxy := keyProxy(t, g.URL, key)
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			for _, c := range runScenario(t, proxy+"/demo/mcp", scenario) {
				switch c.Status {
				case "SUCCESS", "INFO":
				case "WARNING":
					t.Logf("warning: %s: %s %s", c.ID, c.ErrorMessage, c.Details)
				default:
					t.Errorf("%s: %s: %s %s", c.ID, c.Status, c.ErrorMessage, c.Details)
				}
			}
		})
	}
}

// keyProxy serves a reverse proxy to target that adds the key.
//
// It reads each request's body whole before forwarding it. Streamed from
// the inbound request instead, the body races net/http's server: when the
// proxy writes the response head, the server drains and closes the
// inbound body, and the transport, which has sent the declared length but
// reads the body once more to see it end, then fails that read with
// "invalid Read on closed Body" and closes the connection to the gateway
// under the response being copied (Go issue 40747). On a busy machine that
// cut SSE responses short: the suite saw "terminated" or a response with
// no result, and the proxy logged "use of closed network connection".
func keyProxy(t *testing.T, target, key string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // a foreign Host reaches the gateway as sent
			pr.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1, // stream SSE as it comes
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "key proxy: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// check is one entry of a scenario's checks.json.
type check = conformance.Check

// runScenario runs one scenario of the pinned suite and returns its checks.
func runScenario(t *testing.T, url, scenario string) []check {
	t.Helper()
	return conformance.Run(t, ".", url, scenario)
}
