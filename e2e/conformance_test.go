package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
type check struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// runScenario runs one scenario of the pinned suite and returns its checks.
func runScenario(t *testing.T, url, scenario string) []check {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--import", "./node20-compat/register.mjs",
		"node_modules/@modelcontextprotocol/conformance/dist/index.js",
		"server", "--url", url, "--scenario", scenario, "-o", out)
	log, err := cmd.CombinedOutput()
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(files) == 0 {
		t.Fatalf("the suite wrote no checks (%v):\n%s", err, log)
	}
	var checks []check
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []check
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checks = append(checks, cs...)
	}
	if len(checks) == 0 {
		t.Fatalf("scenario %s ran no checks:\n%s", scenario, log)
	}
	return checks
}
