package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rateLimitConfig limits get_invoice by its skill (3 at once, then one
// every 30 s) and create_invoice by a limit of its own.
const rateLimitConfig = `users:
  - name: alice
agents:
  - id: invoices
    owner: alice
    mcp_enabled: true
    skills:
      - name: billing
        kind: rest
        base_url: BASE
        allow_private: true
        rate_limit: {per_minute: 2, burst: 3}
        tools:
          - name: get_invoice
            input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
            request: {method: GET, path: "/invoices/{id}"}
          - name: create_invoice
            input_schema: {type: object}
            rate_limit: {per_minute: 2, burst: 1}
            request: {method: POST, path: /invoices, body: all}
`

// tokenEvery is how often the test limits give a token back.
const tokenEvery = 30 * time.Second

// rateLimitSetup writes the config for a counting backend and returns its
// path, the backend and the environment for the gateway and the CLI.
func rateLimitSetup(t *testing.T, extraEnv ...string) (string, *billingAPI, []string) {
	t.Helper()
	api := &billingAPI{}
	backend := httptest.NewServer(api)
	t.Cleanup(backend.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(rateLimitConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, api, append([]string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data")}, extraEnv...)
}

// calls returns how many requests the backend got.
func (b *billingAPI) calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.paths)
}

// timedCall is one tools/call with when it was sent and answered.
type timedCall struct {
	sent, answered time.Time
	r              *rpcResponse
}

// callTimed calls a tool in s.
func callTimed(s *rpcSession, tool, args string) timedCall {
	c := timedCall{sent: time.Now()}
	c.r = s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
	c.answered = time.Now()
	return c
}

// retryAfterMS returns a refused call's error.data.retry_after_ms, failing
// the test unless the call was refused by a rate limit.
func retryAfterMS(t *testing.T, c timedCall) float64 {
	t.Helper()
	e := c.r.Error
	if e == nil || e.Code != -32000 || e.Data["reason"] != "rate_limited" || e.Data["status"] != 429.0 {
		t.Fatalf("want a rate_limited error; got HTTP %d %s", c.r.Status, c.r.Body)
	}
	return e.Data["retry_after_ms"].(float64)
}

// mustRetryAfterTrue checks that a refusal's retry_after_ms is within 10%
// of the truth: a token comes back tokenEvery after the bucket, full,
// gave its first token, which happened during first.
func mustRetryAfterTrue(t *testing.T, first, refused timedCall) {
	t.Helper()
	ms := retryAfterMS(t, refused)
	lo := float64((tokenEvery - refused.answered.Sub(first.sent)).Milliseconds())
	hi := float64((tokenEvery - refused.sent.Sub(first.answered)).Milliseconds())
	if ms < 0.9*lo || ms > 1.1*hi {
		t.Errorf("retry_after_ms = %v, want within 10%% of [%v, %v]", ms, lo, hi)
	}
}

// countAdmitted makes calls of get_invoice round robin over sessions and
// returns the first call and the refused ones.
func countAdmitted(t *testing.T, sessions []*rpcSession, n int) (admitted int, first timedCall, refused []timedCall) {
	t.Helper()
	for i := range n {
		c := callTimed(sessions[i%len(sessions)], "get_invoice", fmt.Sprintf(`{"id":"%d"}`, i))
		if i == 0 {
			first = c
		}
		if c.r.Error == nil && c.r.Result != nil {
			admitted++
		} else {
			refused = append(refused, c)
		}
	}
	return admitted, first, refused
}

// TestRateLimit runs the real binary on SQLite: of 6 calls at once, the
// skill's burst of 3 reaches the backend and 3 are refused with the true
// time until a token is free; a tool's own limit is a budget apart; another
// caller has its own; HandsAI answers 429 with Retry-After.
func TestRateLimit(t *testing.T) {
	cfg, api, env := rateLimitSetup(t)
	g := startGateway(t, env, "--config", cfg)
	oag := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	bak := strings.TrimSpace(runCLI(t, env, "key", "create", "--agent", "invoices"))
	s := openSession(t, g.URL+"/invoices/mcp", bearer(oag))

	admitted, first, refused := countAdmitted(t, []*rpcSession{s}, 6)
	if admitted != 3 || api.calls() != 3 {
		t.Fatalf("%d calls admitted and %d reached the backend, want 3 and 3", admitted, api.calls())
	}
	for _, c := range refused {
		mustRetryAfterTrue(t, first, c)
	}
	if c := callTimed(s, "create_invoice", `{}`); c.r.Error != nil {
		t.Fatalf("a tool with a limit of its own: %s", c.r.Body)
	}
	retryAfterMS(t, callTimed(s, "create_invoice", `{}`))
	other := openSession(t, g.URL+"/invoices/mcp", map[string]string{"X-Agent-API-Key": bak})
	if c := callTimed(other, "get_invoice", `{"id":"x"}`); c.r.Error != nil {
		t.Fatalf("another caller: %s", c.r.Body)
	}
	mustHandsAI429(t, g.URL, oag)
}

// mustHandsAI429 checks that a rate-limited HandsAI call is HTTP 429 with
// Retry-After, the seconds of retry_after_ms rounded up.
func mustHandsAI429(t *testing.T, base, key string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/mcp/tools/call", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Data struct {
				RetryAfterMS float64 `json:"retry_after_ms"`
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&body)
	want := strconv.Itoa(int(math.Ceil(body.Error.Data.RetryAfterMS / 1000)))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != want || want == "0" {
		t.Errorf("HandsAI: HTTP %d, Retry-After %q, retry_after_ms %v", resp.StatusCode, resp.Header.Get("Retry-After"), body.Error.Data.RetryAfterMS)
	}
}

// TestRateLimitSharedOnPostgres runs two gateway processes on one
// PostgreSQL database: calls alternating between them spend one budget,
// exactly the burst of 3 in the window, and every refusal carries the
// true time until the shared bucket has a token.
func TestRateLimitSharedOnPostgres(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	cfg, api, env := rateLimitSetup(t, postgresEnv(t)...)
	g1 := startGateway(t, env, "--config", cfg, "--data-dir", t.TempDir())
	g2 := startGateway(t, env, "--config", cfg, "--data-dir", t.TempDir())
	oag := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	sessions := []*rpcSession{openSession(t, g1.URL+"/invoices/mcp", bearer(oag)), openSession(t, g2.URL+"/invoices/mcp", bearer(oag))}

	admitted, first, refused := countAdmitted(t, sessions, 8)
	if admitted != 3 || api.calls() != 3 {
		t.Fatalf("two replicas admitted %d calls, and %d reached the backend; want the one budget of 3", admitted, api.calls())
	}
	for _, c := range refused {
		mustRetryAfterTrue(t, first, c)
	}
}
