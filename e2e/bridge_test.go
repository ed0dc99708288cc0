package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bridged is a gateway relaying the go-sdk fixture, served over HTTP in
// one revision: its agent's URL, the same behind a key-adding proxy (for
// clients that send no credentials), the key and the CLI's environment.
type bridged struct {
	url, proxied, key string
	env               []string
	api               *apiClient
}

// startBridged starts the fixture with -stateless=stateless (true: it
// speaks 2026-07-28 only; false: sessions, 2025-11-25 and older) and a
// gateway whose agent "everything" relays it.
func startBridged(t *testing.T, stateless string) *bridged {
	t.Helper()
	fixture := buildTool(t, everythingServer)
	addr := freeAddr(t)
	startProcess(t, nil, fixture, "-http="+addr, "-stateless="+stateless)
	waitListening(t, addr)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	skill := "        url: http://" + addr + "/mcp\n        allow_private: true\n"
	if err := os.WriteFile(cfg, []byte(relayConfig(skill)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data")}
	g := startGateway(t, env, "--config", cfg)
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	waitForTools(t, g.URL+"/everything/mcp", key)
	return &bridged{
		url: g.URL + "/everything/mcp", proxied: keyProxy(t, g.URL, key) + "/everything/mcp", key: key, env: env,
		api: &apiClient{t: t, base: g.URL + "/api/v1", key: key},
	}
}

// mustShowRevision checks that the skill's health names the revision the
// gateway negotiated, in the CLI and in the management API.
func (b *bridged) mustShowRevision(t *testing.T, want string) {
	t.Helper()
	if out := runCLI(t, b.env, "agent", "show", "everything"); !strings.Contains(out, "protocol: "+want) {
		t.Errorf("agent show does not name protocol %s:\n%s", want, out)
	}
	var sk struct {
		Health struct {
			ProtocolVersion string `json:"protocol_version"`
		} `json:"health"`
	}
	b.api.mustDo("GET", "/agents/everything/skills/fixture", nil, http.StatusOK, &sk)
	if sk.Health.ProtocolVersion != want {
		t.Errorf("API health protocol_version %q, want %q", sk.Health.ProtocolVersion, want)
	}
}

// mustModernCall calls a tool with a raw 2026-07-28 request and returns
// its result's first text.
func (b *bridged) mustModernCall(t *testing.T, tool string) string {
	t.Helper()
	status, _, v := modernPost(t, b.url, b.key, "tools/call", tool, `"name":"`+tool+`","arguments":{}`, nil)
	res, _ := v["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if status != 200 || res["resultType"] != "complete" || len(content) == 0 {
		t.Fatalf("2026-07-28 tools/call %s: %d %v", tool, status, v)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

// TestBridge runs both bridge directions through the binary, each against
// a gateway relaying the go-sdk fixture in one revision, and on the same
// gateway the 0.2.0 alpha conformance suite's requirement set of that
// revision (conformance_next_test.go). Two gateways in all, in parallel,
// to keep the package's time small.
func TestBridge(t *testing.T) {
	t.Parallel()
	t.Run("modern-upstream", func(t *testing.T) {
		t.Parallel()
		b := startBridged(t, "true")
		oldClientModernUpstream(t, b)
		conformanceNext(t, b, "2026-07-28")
	})
	t.Run("session-upstream", func(t *testing.T) {
		t.Parallel()
		b := startBridged(t, "false")
		modernClientOldUpstream(t, b)
		conformanceNext(t, b, "2025-11-25")
	})
}

// oldClientModernUpstream puts a client of the old revision
// (the official TypeScript SDK, 2025-11-25 with a session) in front of an
// upstream that speaks only 2026-07-28: the gateway negotiates the
// stateless revision (shown in the skill's health), calls go through, and
// the upstream's InputRequiredResult reaches the client as the
// elicitation and sampling requests it answers, whose answers complete
// the call. A 2026-07-28 client gets the same upstream's tools too, and the
// 0.1.16 suite's old-revision scenarios that need translating pass.
func oldClientModernUpstream(t *testing.T, b *bridged) {
	b.mustShowRevision(t, "2026-07-28")
	rep, ok := runClient(t, clientPlan{
		URL:         b.proxied,
		Elicitation: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}},
		Sampling:    map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "e2e"},
		Calls: []clientCall{
			{Name: "test_simple_text"},
			{Name: "test_input_required_result_elicitation"},
			{Name: "test_input_required_result_sampling"},
		},
	})
	if !ok || rep.Server == nil || rep.Server.ProtocolVersion != "2025-11-25" {
		t.Fatalf("TS SDK client: %+v %+v", rep.Error, rep.Server)
	}
	for i, want := range []string{"This is a simple text response for testing.", "Hello, Ada!", "Sampling response: Paris"} {
		c := rep.Calls[i]
		if c.Result == nil || c.Result.IsError || len(c.Result.Content) == 0 || c.Result.Content[0].Text != want {
			t.Errorf("%s: %+v %+v, want %q", c.Name, c.Error, c.Result, want)
		}
	}
	if got := b.mustModernCall(t, "test_simple_text"); got != "This is a simple text response for testing." {
		t.Errorf("2026-07-28 client through a 2026-07-28 upstream: %q", got)
	}
	// The 0.1.16 suite's session clients, on the scenarios the bridge
	// translates: progress and log messages, subscriptions (on the
	// upstream's subscriptions/listen), prompts and completion. (The
	// fixture's pre-2026 sampling and elicitation tools cannot ask a
	// 2026-07-28 client anything, the gateway included; its MRTR tools
	// are bridged above.)
	for _, scenario := range []string{"tools-call-with-progress", "tools-call-with-logging", "resources-subscribe", "resources-unsubscribe", "prompts-get-with-args", "completion-complete"} {
		for _, c := range runScenarioSettled(t, b.proxied, scenario) {
			if c.Status != "SUCCESS" && c.Status != "INFO" {
				t.Errorf("%s/%s: %s: %s %s", scenario, c.ID, c.Status, c.ErrorMessage, c.Details)
			}
		}
	}
}

// modernClientOldUpstream puts a 2026-07-28 client (raw
// stateless requests) in front of an upstream that keeps sessions and
// speaks 2025-11-25: the gateway falls back to initialize (shown in the
// health) and the client's tools, resources and prompts requests are
// relayed on the gateway's upstream session.
func modernClientOldUpstream(t *testing.T, b *bridged) {
	b.mustShowRevision(t, "2025-11-25")
	if got := b.mustModernCall(t, "test_simple_text"); got != "This is a simple text response for testing." {
		t.Errorf("tools/call: %q", got)
	}
	status, _, v := modernPost(t, b.url, b.key, "resources/read", "test://static-text", `"uri":"test://static-text"`, nil)
	if res, _ := v["result"].(map[string]any); status != 200 || res["contents"] == nil || res["resultType"] != "complete" {
		t.Errorf("resources/read: %d %v", status, v)
	}
	status, _, v = modernPost(t, b.url, b.key, "prompts/get", "test_simple_prompt", `"name":"test_simple_prompt"`, nil)
	if res, _ := v["result"].(map[string]any); status != 200 || res["messages"] == nil {
		t.Errorf("prompts/get: %d %v", status, v)
	}
}
