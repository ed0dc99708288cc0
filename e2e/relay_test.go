package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/conformance"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingServer is the official Go SDK's conformance fixture: an MCP
// server with every tool, resource and prompt the suite exercises.
const everythingServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// relayScenarios are the active server scenarios of the pinned suite
// (0.1.16), all of which an agent relaying the fixture must pass.
var relayScenarios = conformance.RelayScenarios

// relayConfig is a config file with one agent whose only skill is the
// fixture, reached as skill says.
func relayConfig(skill string) string {
	return `users: [{name: alice}]
agents:
  - id: everything
    owner: alice
    mcp_enabled: true
    skills:
      - name: fixture
        kind: mcp
` + skill
}

// TestRelayConformance runs every active scenario of the conformance suite
// against an agent whose only skill is the fixture server, over Streamable
// HTTP and over stdio. The suite sends no credentials, so keyProxy adds a
// user key, forwarding Host and Origin as sent so that the gateway's own
// DNS-rebinding guard is what the suite tests.
func TestRelayConformance(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	fixture := buildTool(t, everythingServer)
	// Each transport's scenarios run in two halves at once, each on a
	// gateway and fixture of its own: one after another they were the
	// package's longest test by far (three minutes), and its last.
	half := len(relayScenarios) / 2
	for i, scenarios := range [][]string{relayScenarios[:half], relayScenarios[half:]} {
		t.Run(fmt.Sprintf("http%d", i+1), func(t *testing.T) {
			t.Parallel()
			addr := freeAddr(t)
			startProcess(t, nil, fixture, "-http="+addr, "-stateless=false")
			waitListening(t, addr)
			runRelaySuite(t, "        url: http://"+addr+"/mcp\n        allow_private: true\n", scenarios, fixtureDropsResumedResult)
		})
		t.Run(fmt.Sprintf("stdio%d", i+1), func(t *testing.T) {
			t.Parallel()
			runRelaySuite(t, "        command: "+yamlQuote(fixture)+"\n", scenarios, nil)
		})
	}
}

// fixtureDropsResumedResult is the one check the fixture cannot pass over
// HTTP (see conformance.FixtureDropsResumedResult): only a warning is
// tolerated, never a failure.
var fixtureDropsResumedResult = conformance.FixtureDropsResumedResult

// runRelaySuite starts a gateway with the fixture as skill and runs the
// scenarios through a key-adding proxy. Every check must succeed, except
// that the checks in warnOK may warn.
func runRelaySuite(t *testing.T, skill string, scenarios []string, warnOK map[string]string) {
	url := startRelay(t, skill)
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			conformance.Judge(t, runScenarioSettled(t, url, scenario), warnOK)
		})
	}
}

// startRelay starts a gateway whose agent "everything" has skill as its
// only skill, waits until its tools are listed, and returns the agent's
// MCP URL behind a proxy that adds a user key.
func startRelay(t *testing.T, skill string) string {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(relayConfig(skill)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data")}
	g := startGateway(t, env, "--config", cfg)
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	waitForTools(t, g.URL+"/everything/mcp", key)
	return keyProxy(t, g.URL, key) + "/everything/mcp"
}

// TestRelayResumesPolledStream runs the suite's SSE polling scenario
// through an agent whose upstream, unlike the pinned fixture, keeps its
// events: its test_reconnection tool closes its reply stream mid-call
// (SEP-1699) and answers only once the gateway has resumed that stream.
// The gateway must resume upstream and pass the pause on to the suite,
// which then finds the result when it resumes in turn: every check
// succeeds, the resumption check included (SUCCESS, not INFO). The
// official TypeScript SDK client gets the result through a pause too.
func TestRelayResumesPolledStream(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	addr := pollingUpstream(t)
	url := startRelay(t, "        url: http://"+addr+"/mcp\n        allow_private: true\n")
	resumed := false
	for _, c := range runScenarioSettled(t, url, "server-sse-polling") {
		if c.Status != "SUCCESS" && c.Status != "INFO" {
			t.Errorf("%s: %s: %s %s", c.ID, c.Status, c.ErrorMessage, c.Details)
		}
		resumed = resumed || (c.ID == "server-sse-disconnect-resume" && c.Status == "SUCCESS")
	}
	if !resumed {
		t.Error("server-sse-disconnect-resume did not succeed: the suite found the result on the POST stream, or nowhere")
	}

	// The official TypeScript SDK client, as a host, resumes the paused
	// reply on its own and gets the result.
	rep, ok := runClient(t, clientPlan{URL: url, Calls: []clientCall{{Name: "test_reconnection"}}})
	if !ok || rep.Calls[0].Result == nil || len(rep.Calls[0].Result.Content) == 0 {
		t.Fatalf("TS SDK client: %+v %+v", rep.Error, rep.Calls)
	}
	if got := rep.Calls[0].Result.Content[0].Text; got != "resumed" {
		t.Errorf("TS SDK client got %q, want the upstream's answer", got)
	}
}

// pollingUpstream serves, on 127.0.0.1, a go-sdk MCP server that keeps
// its events and has the suite's test_reconnection tool, which closes its
// reply stream and answers once a client has resumed it.
func pollingUpstream(t *testing.T) string {
	resumed := make(chan struct{})
	var once sync.Once
	s := sdk.NewServer(&sdk.Implementation{Name: "polling", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "test_reconnection", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		select {
		case <-resumed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "resumed"}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			once.Do(func() { close(resumed) })
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// waitForTools waits until the agent at url lists tools: discovery of an
// upstream runs in the background after the gateway starts, and a loaded
// machine running the race detector may take a while.
func waitForTools(t *testing.T, url, key string) {
	t.Helper()
	eventuallyWithin(t, 90*time.Second, func() bool {
		return len(openSession(t, url, bearer(key)).toolNames()) > 0
	})
}

// TestRelayUpstreamDownAtStart starts the gateway before its upstream:
// the skill's health says why it has no tools, the gateway keeps trying,
// and once the upstream is up its tools are served and the health says
// connected, through the CLI and the management API alike.
func TestRelayUpstreamDownAtStart(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	fixture := buildTool(t, everythingServer)
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	skill := "        url: http://" + addr + "/mcp\n        allow_private: true\n"
	if err := os.WriteFile(cfg, []byte(relayConfig(skill)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data")}
	g := startGateway(t, env, "--config", cfg)
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	eventually(t, func() bool {
		return strings.Contains(runCLI(t, env, "agent", "show", "everything"), "state: error")
	})
	if names := openSession(t, g.URL+"/everything/mcp", bearer(key)).toolNames(); len(names) != 0 {
		t.Fatalf("tools before the upstream is up: %v", names)
	}
	startProcess(t, nil, fixture, "-http="+addr, "-stateless=false")
	waitForTools(t, g.URL+"/everything/mcp", key)
	eventually(t, func() bool {
		return strings.Contains(runCLI(t, env, "agent", "show", "everything"), "state: connected")
	})
	var sk struct {
		Health struct {
			State string `json:"state"`
			Tools int    `json:"tools"`
		} `json:"health"`
	}
	api := &apiClient{t: t, base: g.URL + "/api/v1", key: key}
	api.mustDo("GET", "/agents/everything/skills/fixture", nil, http.StatusOK, &sk)
	if sk.Health.State != "connected" || sk.Health.Tools == 0 {
		t.Errorf("API health = %+v, want connected with tools", sk.Health)
	}
}

// TestRelaySkillThroughAPI adds an mcp skill over the management API: the
// gateway connects and discovers its tools, an open session hears of them,
// a call is relayed, and deleting the skill stops the relay.
func TestRelaySkillThroughAPI(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	fixture := buildTool(t, everythingServer)
	addr := freeAddr(t)
	startProcess(t, nil, fixture, "-http="+addr, "-stateless=false")
	waitListening(t, addr)
	g, api, _ := startWithUser(t, nil)
	api.mustDo("POST", "/agents", map[string]any{"id": "relay", "name": "Relay", "mcp_enabled": true}, http.StatusCreated, nil)
	url := g.URL + "/relay/mcp"
	s := openSession(t, url, bearer(api.key))
	api.mustDo("POST", "/agents/relay/skills", map[string]any{
		"name": "fixture", "kind": "mcp", "url": "http://" + addr + "/mcp", "allow_private": true, "prefix": "ev_",
	}, http.StatusCreated, nil)
	waitForTools(t, url, api.key)
	if names := s.toolNames(); !slices.Contains(names, "ev_test_simple_text") {
		t.Fatalf("the open session lists %v, want the fixture's tools with the prefix", names)
	}
	r := s.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ev_test_simple_text","arguments":{}}}`)
	if !strings.Contains(r.Body, `"text"`) || strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("relayed call: HTTP %d %s", r.Status, r.Body)
	}
	api.mustDo("DELETE", "/agents/relay/skills/fixture", nil, http.StatusNoContent, nil)
	if names := s.toolNames(); len(names) != 0 {
		t.Errorf("after DELETE the session lists %v", names)
	}
}

// runScenarioSettled runs a scenario, and once more if the suite itself
// crashed (see conformance.RunSettled).
func runScenarioSettled(t *testing.T, url, scenario string) []check {
	t.Helper()
	return conformance.RunSettled(t, ".", url, scenario)
}
