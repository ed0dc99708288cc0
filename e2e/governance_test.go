package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingAPI is a REST backend that counts its calls and answers slowly
// enough for duplicates to arrive while the first call runs.
type countingAPI struct{ n atomic.Int64 }

func (c *countingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.n.Add(1)
	body, _ := io.ReadAll(r.Body)
	time.Sleep(300 * time.Millisecond)
	if strings.HasPrefix(r.URL.Path, "/fail") {
		http.Error(w, "out of stock", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"order": n, "body": string(body)})
}

const shopConfig = `idempotency_ttl: 1h
call_retention: 240h
users:
  - name: alice
  - name: bob
agents:
  - id: shop
    name: Shop
    description: Places orders.
    owner: alice
    mcp_enabled: true
    skills:
      - name: orders
        kind: rest
        base_url: BASE
        allow_private: true
        timeout: 10s
        tools:
          - name: place_order
            description: Place an order.
            input_schema: {type: object, properties: {item: {type: string}, password: {type: string}, note: {type: string, x-sensitive: true}}, required: [item]}
            request: {method: POST, path: /orders, body: all}
          - name: fail_order
            description: Always refused.
            input_schema: {type: object, properties: {item: {type: string}}}
            request: {method: POST, path: /fail, body: all}
`

// shop is a gateway serving the shop agent over a counting backend.
type shop struct {
	api     *countingAPI
	env     []string
	cfg     string
	alice   string
	bob     string
	session *rpcSession
}

// newShop writes the config, makes alice's and bob's keys on the store in
// env (a data dir or a --db), and starts one gateway.
func newShop(t *testing.T, env []string, args ...string) (*shop, *gateway) {
	t.Helper()
	s := &shop{api: &countingAPI{}, env: env}
	backend := httptest.NewServer(s.api)
	t.Cleanup(backend.Close)
	s.cfg = filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(s.cfg, []byte(strings.ReplaceAll(shopConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	g := s.start(t, args...)
	s.alice = strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	s.bob = strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "bob"))
	s.session = openSession(t, g.URL+"/shop/mcp", bearer(s.alice))
	return s, g
}

// start runs a gateway with the shop's config.
func (s *shop) start(t *testing.T, args ...string) *gateway {
	return startGateway(t, s.env, append([]string{"--config", s.cfg}, args...)...)
}

// call posts a tools/call with arguments in the shop's session.
func (s *shop) call(id int, tool, args string) *rpcResponse {
	return s.session.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
}

// withoutReplayMeta returns a result with its _meta taken out, and whether
// _meta marked it a replay.
func withoutReplayMeta(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	replay := strings.Contains(string(m["_meta"]), `"mcpgate/idempotent_replay":true`)
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return string(b), replay
}

// duplicates sends n calls with one key at once and checks that the backend
// ran once and every caller got its result or a 409 conflict.
func duplicates(t *testing.T, calls []func() *rpcResponse, api *countingAPI, before int64) (string, int) {
	t.Helper()
	out := make([]*rpcResponse, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { out[i] = c() })
	}
	wg.Wait()
	if got := api.n.Load() - before; got != 1 {
		t.Fatalf("%d duplicate calls reached the backend %d times, want once", len(calls), got)
	}
	var first string
	conflicts := 0
	for _, r := range out {
		if r.Error != nil {
			if r.Error.Data["reason"] != "conflict" || r.Error.Data["status"] != 409.0 || !strings.Contains(r.Error.Message, "rotate the key") {
				t.Fatalf("duplicate call: %s", r.Body)
			}
			conflicts++
			continue
		}
		res, _ := withoutReplayMeta(t, r.Result)
		if first == "" {
			first = res
		} else if res != first {
			t.Fatalf("duplicates got different results:\n%s\n%s", first, res)
		}
	}
	t.Logf("%d calls: %d results, %d conflicts", len(calls), len(calls)-conflicts, conflicts)
	return first, conflicts
}

// TestIdempotencyKeys drives the binary on each engine: 50 duplicates
// reach the backend once, a changed argument is 422, the HandsAI surface
// replays too, the result survives a restart, a short TTL expires, and the
// audit log records every outcome with the secrets redacted.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	t.Run("sqlite", func(t *testing.T) {
		testIdempotencyKeys(t, []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")})
	})
	t.Run("postgres", func(t *testing.T) {
		testIdempotencyKeys(t, append(postgresEnv(t), "MCPGATE_DATA_DIR="+filepath.Join(t.TempDir(), "data")))
	})
}

func testIdempotencyKeys(t *testing.T, env []string) {
	s, g := newShop(t, env)
	args := `{"item":"tea","password":"hunter2","note":"gift","idempotency_key":"order-1"}`
	calls := make([]func() *rpcResponse, 50)
	for i := range calls {
		calls[i] = func() *rpcResponse { return s.call(10+i, "place_order", args) }
	}
	result, conflicts := duplicates(t, calls, s.api, 0)
	if !strings.Contains(result, `\"order\":1`) || strings.Contains(result, "idempotency_key") {
		t.Fatalf("result %s: want the first order, without the key passed on", result)
	}

	r := s.call(100, "place_order", `{"item":"coffee","idempotency_key":"order-1"}`)
	if r.Error == nil || r.Error.Data["reason"] != "idempotency_mismatch" || r.Error.Data["status"] != 422.0 {
		t.Fatalf("other arguments with the same key: %s", r.Body)
	}
	if r := s.call(101, "place_order", `{"item":"tea","idempotency_key":""}`); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("an empty key: %s", r.Body)
	}
	checkHandsAIReplay(t, g.URL, s.alice, result)
	if r := s.call(102, "fail_order", `{"item":"x","idempotency_key":"f-1"}`); !strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("fail_order: %s", r.Body)
	}
	if r := s.call(103, "fail_order", `{"item":"x","idempotency_key":"f-1"}`); !strings.Contains(r.Body, "idempotent_replay") {
		t.Fatalf("a tool error is not replayed: %s", r.Body)
	}
	s.call(104, "no_such_tool", `{}`)
	if n := s.api.n.Load(); n != 2 {
		t.Fatalf("backend called %d times, want 2", n)
	}
	checkAudit(t, s, g.URL, conflicts)

	g.stop()
	g = s.start(t, "--idempotency-ttl", "2s")
	s.session = openSession(t, g.URL+"/shop/mcp", bearer(s.alice))
	r = s.call(200, "place_order", args)
	if got, replay := withoutReplayMeta(t, r.Result); got != result || !replay {
		t.Fatalf("after a restart: %s, want a replay of %s", r.Body, result)
	}
	if r := s.call(201, "place_order", `{"item":"jam","idempotency_key":"short"}`); r.Error != nil {
		t.Fatalf("jam: %s", r.Body)
	}
	eventually(t, func() bool {
		again := s.call(202, "place_order", `{"item":"jam","idempotency_key":"short"}`)
		_, replay := withoutReplayMeta(t, again.Result)
		return !replay
	})
	if n := s.api.n.Load(); n != 4 {
		t.Fatalf("backend called %d times after the key expired, want 4", n)
	}
}

// checkHandsAIReplay calls the HandsAI surface with the same key: the
// stored result, no backend call.
func checkHandsAIReplay(t *testing.T, url, key, want string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"place_order","arguments":{"item":"tea","password":"hunter2","note":"gift","idempotency_key":"order-1"}}}`
	req, _ := http.NewRequest("POST", url+"/mcp/tools/call", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	status, reply := do(t, req)
	var wantRes struct {
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal([]byte(want), &wantRes)
	if status != 200 || !strings.Contains(string(reply), string(wantRes.Content)) {
		t.Fatalf("HandsAI replay: HTTP %d %s, want content %s", status, reply, wantRes.Content)
	}
}

// auditedCall is what the checks read of a call record.
type auditedCall struct {
	ID             string          `json:"id"`
	Tool           string          `json:"tool"`
	Outcome        string          `json:"outcome"`
	Arguments      json.RawMessage `json:"arguments"`
	IdempotencyKey string          `json:"idempotency_key"`
	CredentialKind string          `json:"credential_kind"`
	ResultBytes    int             `json:"result_bytes"`
}

// checkAudit reads the log with the CLI and the API: one row per call,
// every outcome, secrets redacted, and bob sees none of alice's calls.
func checkAudit(t *testing.T, s *shop, url string, conflicts int) {
	t.Helper()
	var list struct {
		Calls []auditedCall `json:"calls"`
	}
	eventually(t, func() bool {
		list.Calls = nil
		json.Unmarshal([]byte(runCLI(t, s.env, "calls", "list", "--agent", "shop", "--limit", "1000", "--json")), &list)
		return len(list.Calls) == 50+6
	})
	count := map[string]int{}
	for _, c := range list.Calls {
		count[c.Outcome]++
		if c.Tool == "place_order" && c.IdempotencyKey == "order-1" && c.Outcome != "conflict" {
			var args bytes.Buffer
			json.Compact(&args, c.Arguments)
			if args.String() != `{"item":"tea","note":"[REDACTED]","password":"[REDACTED]"}` || c.ResultBytes == 0 {
				t.Errorf("audited %+v: want the secrets redacted and a result size", c)
			}
		}
	}
	// Of the 49 duplicates, those that came while the first ran are
	// conflicts and those after it replays; the mismatch is a conflict too,
	// and the HandsAI call and the tool error's second call are replays.
	if count["ok"] != 1 || count["conflict"] != conflicts+1 || count["replayed"] != 49-conflicts+2 || count["invalid"] != 1 || count["tool_error"] != 1 || count["rejected"] != 1 {
		t.Errorf("outcomes %v", count)
	}
	var fromAPI struct {
		Calls      []auditedCall `json:"calls"`
		NextCursor string        `json:"next_cursor"`
	}
	(&apiClient{t: t, base: url + "/api/v1", key: s.alice}).mustDo("GET", "/calls?outcome=tool_error", nil, 200, &fromAPI)
	if len(fromAPI.Calls) != 1 || fromAPI.Calls[0].Tool != "fail_order" || fromAPI.Calls[0].CredentialKind != "user_key" {
		t.Errorf("alice's tool errors: %+v", fromAPI.Calls)
	}
	alice := &apiClient{t: t, base: url + "/api/v1", key: s.alice}
	alice.mustDo("GET", "/calls?since=yesterday", nil, 400, nil)
	alice.mustDo("GET", "/calls?cursor=!!", nil, 400, nil)
	alice.mustDo("GET", "/calls?limit=5000", nil, 400, nil)
	alice.mustDo("GET", "/calls?limit=20", nil, 200, &fromAPI)
	if len(fromAPI.Calls) != 20 || fromAPI.NextCursor == "" {
		t.Errorf("a page of 20: %d calls, cursor %q", len(fromAPI.Calls), fromAPI.NextCursor)
	}
	table := runCLI(t, s.env, "calls", "list", "--outcome", "tool_error")
	if !strings.Contains(table, "fail_order") || !strings.Contains(table, "OUTCOME") || strings.Contains(table, "place_order") {
		t.Errorf("calls list --outcome tool_error:\n%s", table)
	}
	bob := &apiClient{t: t, base: url + "/api/v1", key: s.bob}
	bob.mustDo("GET", "/calls", nil, 200, &fromAPI)
	if len(fromAPI.Calls) != 0 {
		t.Errorf("bob sees %d of alice's calls", len(fromAPI.Calls))
	}
	bob.mustDo("GET", "/calls/"+list.Calls[0].ID, nil, 404, nil)
	(&apiClient{t: t, base: url + "/api/v1", key: s.alice}).mustDo("GET", "/calls/"+list.Calls[0].ID, nil, 200, nil)
}

// TestIdempotencyAcrossReplicas runs two gateways on one PostgreSQL
// database: duplicates sent to both at once reach the backend once, and a
// key claimed on one replays on the other.
func TestIdempotencyAcrossReplicas(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	env := postgresEnv(t)
	s, _ := newShop(t, env, "--data-dir", t.TempDir())
	other := s.start(t, "--data-dir", t.TempDir())
	second := openSession(t, other.URL+"/shop/mcp", bearer(s.alice))
	args := `{"item":"tea","idempotency_key":"pg-1"}`
	body := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"place_order","arguments":%s}}`, id, args)
	}
	calls := make([]func() *rpcResponse, 20)
	for i := range calls {
		sess := s.session
		if i%2 == 1 {
			sess = second
		}
		calls[i] = func() *rpcResponse { return sess.post(body(10 + i)) }
	}
	result, _ := duplicates(t, calls, s.api, 0)
	r := second.post(body(99))
	if got, replay := withoutReplayMeta(t, r.Result); got != result || !replay {
		t.Fatalf("replay on the other replica: %s", r.Body)
	}
}
