package e2e

import (
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
	srv := httptest.NewServer(rp)
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
