package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// outcomesConfig has a tool for each way a call can end: place_order
// answers (with secrets to redact), slow_order waits for the test, hang
// never answers within the skill's 1 s timeout, fail_order is refused,
// limited has a budget of one call, the down skill's API refuses
// connections, and refund waits 1 s for an approval no one gives.
const outcomesConfig = `users:
  - name: alice
agents:
  - id: gov
    owner: alice
    mcp_enabled: true
    skills:
      - name: orders
        kind: rest
        base_url: BASE
        allow_private: true
        timeout: 1s
        tools:
          - name: place_order
            input_schema:
              type: object
              required: [item]
              properties:
                item: {type: string}
                password: {type: string}
                note: {type: string, x-sensitive: true}
                pin: {type: string, writeOnly: true}
                shipping: {type: object, properties: {api_token: {type: string}}}
            request: {method: POST, path: /orders, body: all}
          - name: slow_order
            input_schema: {type: object, properties: {item: {type: string}}}
            request: {method: POST, path: /slow, body: all, timeout: 20s}
          - name: hang
            input_schema: {type: object}
            request: {method: POST, path: /hang, body: all}
          - name: fail_order
            input_schema: {type: object}
            request: {method: POST, path: /fail, body: all}
          - name: limited
            input_schema: {type: object}
            rate_limit: {per_minute: 1, burst: 1}
            request: {method: POST, path: /orders, body: all}
      - name: down
        kind: rest
        base_url: DOWN
        allow_private: true
        tools:
          - name: ping
            input_schema: {type: object}
            request: {method: GET, path: /ping}
      - name: payments
        kind: rest
        base_url: BASE
        allow_private: true
        auto_approve: false
        approval_timeout: 1s
        tools:
          - name: refund
            input_schema: {type: object}
            request: {method: POST, path: /refund, body: all}
`

// outcomesAPI is the REST backend of outcomesConfig. /slow tells started
// and waits for release; /hang waits for the gateway to give up.
type outcomesAPI struct {
	calls   map[string]*atomic.Int64
	started chan struct{}
	release chan struct{}
}

func newOutcomesAPI() *outcomesAPI {
	a := &outcomesAPI{calls: map[string]*atomic.Int64{}, started: make(chan struct{}, 1), release: make(chan struct{})}
	for _, p := range []string{"/orders", "/slow", "/hang", "/fail", "/refund"} {
		a.calls[p] = &atomic.Int64{}
	}
	return a
}

func (a *outcomesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if n := a.calls[r.URL.Path]; n != nil {
		n.Add(1)
	}
	switch r.URL.Path {
	case "/slow":
		a.started <- struct{}{}
		select {
		case <-a.release:
		case <-r.Context().Done():
			return
		}
	case "/hang":
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	case "/fail":
		http.Error(w, "out of stock", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "body": string(body)})
}

// refusingAddr is an address on 127.0.0.1 where nothing listens.
func refusingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestAuditOutcomes drives the binary on both engines through a call of
// every outcome the audit log knows (ok, tool_error, invalid, timeout,
// unavailable, rate_limited, conflict, replayed, rejected), on the MCP
// endpoint and the HandsAI surface, and reads the log back: one row each,
// secrets redacted. On the way it checks that a key in flight is 409 and a
// reused key 422 on both surfaces, and that a timed-out call releases its
// key.
func TestAuditOutcomes(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	t.Run("sqlite", func(t *testing.T) {
		testAuditOutcomes(t, []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")})
	})
	t.Run("postgres", func(t *testing.T) {
		testAuditOutcomes(t, append(postgresEnv(t), "MCPGATE_DATA_DIR="+filepath.Join(t.TempDir(), "data")))
	})
}

// outcomeRun is one gateway of TestAuditOutcomes and its caller.
type outcomeRun struct {
	t       *testing.T
	api     *outcomesAPI
	url     string
	key     string
	session *rpcSession
	id      int
}

// call makes a tools/call on the MCP endpoint.
func (o *outcomeRun) call(tool, args string) *rpcResponse {
	o.id++
	return o.session.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, o.id, tool, args))
}

// handsAI makes a tools/call on the HandsAI surface and returns the HTTP
// status and the decoded reply.
func (o *outcomeRun) handsAI(tool, args string) (int, *rpcResponse) {
	o.t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
	req, _ := http.NewRequest("POST", o.url+"/mcp/tools/call", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+o.key)
	req.Header.Set("Content-Type", "application/json")
	status, reply := do(o.t, req)
	r := &rpcResponse{Status: status, Body: string(reply)}
	if err := json.Unmarshal(reply, r); err != nil {
		o.t.Fatalf("HandsAI %s: %v: %s", tool, err, reply)
	}
	return status, r
}

// mustCondition checks a refusal's error: -32000 with data {reason, status}.
func mustCondition(t *testing.T, what string, r *rpcResponse, reason string, status int) {
	t.Helper()
	e := r.Error
	if e == nil || e.Code != -32000 || e.Data["reason"] != reason || e.Data["status"] != float64(status) || e.Message == "" {
		t.Fatalf("%s: want -32000 %s %d; got %s", what, reason, status, r.Body)
	}
}

func testAuditOutcomes(t *testing.T, env []string) {
	api := newOutcomesAPI()
	backend := httptest.NewServer(api)
	t.Cleanup(backend.Close)
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	text := strings.NewReplacer("BASE", backend.URL, "DOWN", "http://"+refusingAddr(t)).Replace(outcomesConfig)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, env, "--config", cfg)
	o := &outcomeRun{t: t, api: api, url: g.URL, key: strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))}
	o.session = openSession(t, g.URL+"/gov/mcp", bearer(o.key))

	secrets := `{"item":"tea","password":"hunter2","note":"gift","pin":"1234","shipping":{"api_token":"t0k"}}`
	if r := o.call("place_order", secrets); r.Error != nil || strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("ok: %s", r.Body)
	}
	if r := o.call("fail_order", `{}`); !strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("tool_error: %s", r.Body)
	}
	if r := o.call("place_order", `{"note":"no item"}`); !strings.Contains(r.Body, `"isError":true`) || !strings.Contains(r.Body, "item") {
		t.Fatalf("invalid: %s", r.Body)
	}
	checkTimeoutReleases(t, o)
	if r := o.call("ping", `{}`); !strings.Contains(r.Body, "refused") {
		t.Fatalf("unavailable: %s", r.Body)
	}
	o.call("limited", `{}`)
	mustCondition(t, "rate_limited", o.call("limited", `{}`), "rate_limited", 429)
	checkKeyConditions(t, o)
	if r := o.call("refund", `{"amount":5}`); !strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("rejected: %s", r.Body)
	}
	if n := api.calls["/refund"].Load(); n != 0 {
		t.Fatalf("an unapproved refund reached the API %d times", n)
	}
	checkOutcomeRows(t, env)
}

// checkTimeoutReleases calls hang twice with one key: each call times out
// and reaches the API, because a timeout releases the key.
func checkTimeoutReleases(t *testing.T, o *outcomeRun) {
	t.Helper()
	for range 2 {
		r := o.call("hang", `{"idempotency_key":"h-1"}`)
		if !strings.Contains(r.Body, "timed out after 1s") || strings.Contains(r.Body, "idempotent_replay") {
			t.Fatalf("timeout: %s", r.Body)
		}
	}
	if n := o.api.calls["/hang"].Load(); n != 2 {
		t.Fatalf("hang reached the API %d times, want 2: a timeout must release its key", n)
	}
}

// checkKeyConditions runs slow_order with a key and, while it is in
// flight, sends the same key on both surfaces (409 conflict); after it
// finished, other arguments under the key (422 on both surfaces) and a
// replay.
func checkKeyConditions(t *testing.T, o *outcomeRun) {
	t.Helper()
	args := `{"item":"tea","idempotency_key":"s-1"}`
	first := make(chan *rpcResponse, 1)
	go func() {
		first <- o.session.post(`{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{"name":"slow_order","arguments":` + args + `}}`)
	}()
	select {
	case <-o.api.started:
	case <-time.After(20 * time.Second):
		t.Fatal("slow_order did not reach the API")
	}
	status, r := o.handsAI("slow_order", args)
	if status != http.StatusConflict {
		t.Fatalf("HandsAI while in flight: HTTP %d %s, want 409", status, r.Body)
	}
	mustCondition(t, "HandsAI while in flight", r, "conflict", 409)
	mustCondition(t, "MCP while in flight", o.call("slow_order", args), "conflict", 409)
	close(o.api.release)
	if r := <-first; r.Error != nil || strings.Contains(r.Body, `"isError":true`) {
		t.Fatalf("slow_order: %s", r.Body)
	}
	other := `{"item":"jam","idempotency_key":"s-1"}`
	status, r = o.handsAI("slow_order", other)
	if status != http.StatusUnprocessableEntity {
		t.Fatalf("HandsAI with other arguments: HTTP %d %s, want 422", status, r.Body)
	}
	mustCondition(t, "HandsAI with other arguments", r, "idempotency_mismatch", 422)
	mustCondition(t, "MCP with other arguments", o.call("slow_order", other), "idempotency_mismatch", 422)
	if r := o.call("slow_order", args); !strings.Contains(r.Body, "idempotent_replay") {
		t.Fatalf("replay: %s", r.Body)
	}
	if n := o.api.calls["/slow"].Load(); n != 1 {
		t.Fatalf("slow_order reached the API %d times, want once", n)
	}
}

// checkOutcomeRows reads the audit log with the CLI: a row for each call
// above with its outcome, the secrets of place_order redacted, the timeout
// and the unreachable API with their error messages.
func checkOutcomeRows(t *testing.T, env []string) {
	t.Helper()
	want := map[string]int{"ok": 3, "tool_error": 1, "invalid": 1, "timeout": 2, "unavailable": 1,
		"rate_limited": 1, "conflict": 4, "replayed": 1, "rejected": 1}
	var list struct {
		Calls []struct {
			auditedCall
			Error string `json:"error"`
		} `json:"calls"`
	}
	eventually(t, func() bool {
		list.Calls = nil
		json.Unmarshal([]byte(runCLI(t, env, "calls", "list", "--agent", "gov", "--limit", "1000", "--json")), &list)
		return len(list.Calls) == 15
	})
	got := map[string]int{}
	for _, c := range list.Calls {
		got[c.Outcome]++
		switch {
		case c.Tool == "place_order" && c.Outcome == "ok":
			var args bytes.Buffer
			json.Compact(&args, c.Arguments)
			if args.String() != `{"item":"tea","note":"[REDACTED]","password":"[REDACTED]","pin":"[REDACTED]","shipping":{"api_token":"[REDACTED]"}}` {
				t.Errorf("place_order audited with %s: want the secrets redacted", args.String())
			}
		case c.Outcome == "timeout" && (!strings.Contains(c.Error, "timed out") || c.IdempotencyKey != "h-1"):
			t.Errorf("timeout row %+v", c)
		case c.Outcome == "unavailable" && !strings.Contains(c.Error, "refused"):
			t.Errorf("unavailable row %+v", c)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
