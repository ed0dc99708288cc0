package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mrtrScenarios are the 2026-07-28 conformance suite's multi round-trip
// scenarios (0.2.0-alpha), run against an agent relaying the Go SDK
// fixture.
var mrtrScenarios = []string{
	"input-required-result-basic-elicitation", "input-required-result-basic-sampling",
	"input-required-result-basic-list-roots", "input-required-result-request-state",
	"input-required-result-multiple-input-requests", "input-required-result-multi-round",
	"input-required-result-missing-input-response", "input-required-result-non-tool-request",
	"input-required-result-result-type", "input-required-result-unsupported-methods",
	"input-required-result-tampered-state", "input-required-result-capability-check",
	"input-required-result-ignore-extra-params", "input-required-result-validate-input",
}

// alphaSuite returns the path of the 0.2.0-alpha conformance suite's
// index.js: $MCPGATE_CONFORMANCE_ALPHA, else the one under node_modules when
// its version is an alpha of 0.2.0; "" when there is none.
func alphaSuite() string {
	if p := os.Getenv("MCPGATE_CONFORMANCE_ALPHA"); p != "" {
		return p
	}
	b, err := os.ReadFile("node_modules/@modelcontextprotocol/conformance/package.json")
	var pkg struct {
		Version string `json:"version"`
	}
	if err != nil || json.Unmarshal(b, &pkg) != nil || !strings.HasPrefix(pkg.Version, "0.2.0-alpha") {
		return ""
	}
	return "node_modules/@modelcontextprotocol/conformance/dist/index.js"
}

// runAlphaScenario runs one scenario of the alpha suite at path and
// returns its checks.
func runAlphaScenario(t *testing.T, path, url, scenario string) []check {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--import", "./node20-compat/register.mjs", path,
		"server", "--url", url, "--scenario", scenario, "--spec-version", "2026-07-28", "-o", out)
	log, err := cmd.CombinedOutput()
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	var checks []check
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var cs []check
		if json.Unmarshal(b, &cs) == nil {
			checks = append(checks, cs...)
		}
	}
	if len(checks) == 0 {
		t.Fatalf("scenario %s ran no checks (%v):\n%s", scenario, err, log)
	}
	return checks
}

// TestMultiRoundConformance runs the alpha suite's MRTR scenarios through
// the gateway relaying the fixture, spoken to in 2025-11-25. It skips when
// the alpha suite is not installed (see alphaSuite).
func TestMultiRoundConformance(t *testing.T) {
	suite := alphaSuite()
	if suite == "" {
		t.Skip("the 0.2.0-alpha conformance suite is not installed (set MCPGATE_CONFORMANCE_ALPHA to its dist/index.js)")
	}
	t.Parallel()
	fixture := buildTool(t, everythingServer)
	addr := freeAddr(t)
	startProcess(t, nil, fixture, "-http="+addr, "-stateless=false")
	waitListening(t, addr)
	url := startRelay(t, "        url: http://"+addr+"/mcp\n        allow_private: true\n")
	for _, scenario := range mrtrScenarios {
		t.Run(scenario, func(t *testing.T) {
			for _, c := range runAlphaScenario(t, suite, url, scenario) {
				switch why, known := mrtrKnown[c.ID]; {
				case c.Status == "SUCCESS" || c.Status == "INFO":
					if known {
						t.Logf("%s now passes; remove it from mrtrKnown (%s)", c.ID, why)
					}
				case known:
					t.Logf("%s: %s, known (%s): %s", c.ID, c.Status, why, c.ErrorMessage)
				default:
					t.Errorf("%s: %s: %s %s", c.ID, c.Status, c.ErrorMessage, c.Details)
				}
			}
		})
	}
}

// mrtrKnown are the checks that cannot pass through an upstream spoken to
// in 2025-11-25, with the reason. Such an upstream's go-sdk turns its
// handler's input requests into plain server→client requests, which the
// gateway holds and turns back into inputRequests under keys of its own.
var mrtrKnown = map[string]string{
	"sep-2322-elicitation-incomplete":   `the suite wants the fixture's own key "user_name", which elicitation/create does not carry to the gateway`,
	"sep-2322-multi-round-r2":           "the fixture's go-sdk fulfils one round for a 2025-11-25 client and returns the second round's inputRequests as a plain result",
	"sep-2322-ignore-unexpected-params": "a WARNING (SHOULD): a first request's inputResponses are not relayed to a 2025-11-25 upstream, so the fixture asks again",
}
