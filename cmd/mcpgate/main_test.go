package main

// This file holds the helpers of the in-process end-to-end tests: a Main
// serving on 127.0.0.1:0 with a SQLite data dir under t.TempDir() and a
// config file written by the test, a local REST backend for its tools, keys
// made through the store, and a raw JSON-RPC client that keeps the HTTP
// status and headers so that tests can assert on them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// syncBuffer is a buffer that the gateway writes and the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newTestEnv returns an Env whose output goes to buffers and whose
// environment is vars.
func newTestEnv(vars map[string]string) (env *Env, stdout, stderr *syncBuffer) {
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	env = &Env{Stdout: stdout, Stderr: stderr, Stdin: strings.NewReader(""), LookupEnv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}}
	return env, stdout, stderr
}

// testBackend is the REST API behind the test agents' tools.
type testBackend struct {
	*httptest.Server
	// blocked receives a value when /block gets a request, and ended the
	// error of that request's context once it is done.
	blocked chan struct{}
	ended   chan error
	quit    chan struct{}
}

// bigBody is longer than the bulk skill's max_response_bytes.
var bigBody = `{"rows":"` + strings.Repeat("x", 500) + `"}`

// newTestBackend starts the REST API and stops it at the end of the test.
func newTestBackend(tb testing.TB) *testBackend {
	tb.Helper()
	b := &testBackend{blocked: make(chan struct{}, 1), ended: make(chan error, 1), quit: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", handleEcho)
	mux.HandleFunc("GET /fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the invoice database is down", http.StatusInternalServerError)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, bigBody)
	})
	mux.HandleFunc("GET /slow", b.handleSlow)
	mux.HandleFunc("GET /block", b.handleBlock)
	b.Server = httptest.NewServer(mux)
	tb.Cleanup(func() { close(b.quit); b.Close() })
	return b
}

// handleEcho answers with the request's JSON body.
func handleEcho(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// handleSlow answers only when the test ends, later than any timeout.
func (b *testBackend) handleSlow(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-b.quit:
	}
}

// handleBlock waits until its request's context ends and reports why.
func (b *testBackend) handleBlock(w http.ResponseWriter, r *http.Request) {
	b.blocked <- struct{}{}
	select {
	case <-r.Context().Done():
		b.ended <- r.Context().Err()
	case <-b.quit:
	}
}

// testConfig is the config file of the test gateway; alice is an
// administrator, as writing skills that reach the loopback backend over the
// management API needs one. BACKEND and CLOSED
// are replaced by the backend's URL and a URL nothing listens on; EXTRA
// by more tools of the api skill.
const testConfig = `users:
  - name: alice
    admin: true
  - name: bob
agents:
  - id: shop
    name: Shop
    description: Sells things.
    owner: alice
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: BACKEND
        allow_private: true
        tools:
          - name: echo
            description: Echo the arguments.
            input_schema: {type: object, properties: {text: {type: string}, count: {type: integer, minimum: 1}}, required: [text]}
            request: {method: POST, path: /echo, body: all}
          - name: fail
            input_schema: {type: object}
            request: {method: GET, path: /fail}
          - name: slow
            input_schema: {type: object}
            request: {method: GET, path: /slow, timeout: 100ms}
          - name: block
            input_schema: {type: object}
            request: {method: GET, path: /block}
EXTRA      - name: bulk
        kind: rest
        base_url: BACKEND
        allow_private: true
        max_response_bytes: 64
        tools:
          - name: big
            input_schema: {type: object}
            request: {method: GET, path: /big}
      - name: down
        kind: rest
        base_url: CLOSED
        allow_private: true
        tools:
          - name: refused
            input_schema: {type: object}
            request: {method: GET, path: /anything}
  - id: backoffice
    owner: alice
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: BACKEND
        allow_private: true
        tools:
          - name: echo
            input_schema: {type: object}
            request: {method: POST, path: /echo, body: all}
  - id: hidden
    owner: alice
    mcp_enabled: false
    skills:
      - name: api
        kind: rest
        base_url: BACKEND
        allow_private: true
        tools:
          - name: echo
            input_schema: {type: object}
            request: {method: POST, path: /echo, body: all}
  - id: bobs
    owner: bob
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: BACKEND
        allow_private: true
        tools:
          - name: echo
            input_schema: {type: object}
            request: {method: POST, path: /echo, body: all}
`

// testGateway is a Main serving in-process, with its backend and config.
type testGateway struct {
	*Main
	backend *testBackend
	config  string // the config file's template
	cfgPath string
	closed  string // a URL nothing listens on
	stderr  *syncBuffer
}

// mustStartGateway starts a Main on 127.0.0.1:0 with extra serve flags and
// stops it at the end of the test. Besides the config file's agents, the
// shop agent gets a skill "guarded" (made through the store, since the
// config refuses it) whose loopback base_url lacks allow_private.
func mustStartGateway(tb testing.TB, flags ...string) *testGateway {
	tb.Helper()
	g := mustStartMain(tb, testConfig, flags...)
	g.mustPutGuardedSkill(tb)
	return g
}

// mustStartMain starts a Main on 127.0.0.1:0 with a config file made from
// config (see testConfig for what is replaced in it) and extra serve
// flags, and stops it at the end of the test.
func mustStartMain(tb testing.TB, config string, flags ...string) *testGateway {
	tb.Helper()
	return mustStartMainWith(tb, config, nil, flags...)
}

// mustStartMainWith is mustStartMain with set, when not nil, changing the
// Main after its flags are parsed and before it runs.
func mustStartMainWith(tb testing.TB, config string, set func(*Main), flags ...string) *testGateway {
	tb.Helper()
	dir := tb.TempDir()
	g := &testGateway{backend: newTestBackend(tb), config: config, cfgPath: filepath.Join(dir, "mcpgate.yaml"), closed: closedURL(tb)}
	g.mustWriteConfig(tb, "")
	env, _, stderr := newTestEnv(nil)
	g.stderr = stderr
	g.Main = NewMain(env)
	args := append([]string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--config", g.cfgPath, "--log-level", "warn"}, flags...)
	if err := g.ParseFlags(args); err != nil {
		tb.Fatalf("ParseFlags: %v", err)
	}
	if set != nil {
		set(g.Main)
	}
	if err := g.Run(context.Background()); err != nil {
		g.Close()
		tb.Fatalf("Run: %v\n%s", err, stderr)
	}
	tb.Cleanup(func() { g.mustClose(tb) })
	return g
}

// mustClose stops the gateway and shows its log when the test failed.
func (g *testGateway) mustClose(tb testing.TB) {
	if err := g.Close(); err != nil {
		tb.Errorf("Close: %v", err)
	}
	if tb.Failed() {
		tb.Logf("gateway log:\n%s", g.stderr)
	}
}

// mustWriteConfig writes the config file, with extra in place of EXTRA.
func (g *testGateway) mustWriteConfig(tb testing.TB, extra string) {
	tb.Helper()
	r := strings.NewReplacer("BACKEND", g.backend.URL, "CLOSED", g.closed, "EXTRA", extra)
	if err := os.WriteFile(g.cfgPath, []byte(r.Replace(g.config)), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// mustPutGuardedSkill adds the shop agent's skill whose requests the SSRF
// guard refuses, and reloads the tool tables.
func (g *testGateway) mustPutGuardedSkill(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	s := &mcpgate.Skill{
		AgentID: "shop", Name: "guarded", Kind: mcpgate.SkillREST, BaseURL: g.backend.URL, AutoApprove: true, Source: mcpgate.SourceCLI,
		Tools: []*mcpgate.Tool{{Name: "internal", InputSchema: json.RawMessage(`{"type":"object"}`), Request: &mcpgate.Request{Method: "POST", Path: "/echo"}}},
	}
	if err := g.store.PutSkill(ctx, s); err != nil {
		tb.Fatalf("put skill: %v", err)
	}
	if err := g.registry.Reload(ctx); err != nil {
		tb.Fatalf("reload: %v", err)
	}
}

// closedURL returns the URL of a loopback port that refuses connections.
func closedURL(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// mcpURL returns the MCP endpoint of an agent.
func (g *testGateway) mcpURL(agentID string) string { return g.URL() + "/" + agentID + "/mcp" }

// mustKey makes an API key through the store: a user key when agentID is
// "", else an agent key. It returns the stored key and its secret.
func (g *testGateway) mustKey(tb testing.TB, user, agentID string) (*mcpgate.APIKey, string) {
	tb.Helper()
	ctx := context.Background()
	u, err := g.store.FindUserByName(ctx, user)
	if err != nil {
		tb.Fatalf("find user %s: %v", user, err)
	}
	kind := mcpgate.KeyUser
	if agentID != "" {
		kind = mcpgate.KeyAgent
	}
	k, secret := auth.NewKey(kind, u.ID, agentID, "test")
	if err := g.store.CreateKey(ctx, k); err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return k, secret
}

// bearer returns the headers that send a credential as a bearer token.
func bearer(secret string) http.Header {
	return http.Header{"Authorization": {"Bearer " + secret}}
}

// headers builds a header from name, value pairs.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// with returns h and more, merged into a new header; more's values win.
func with(h http.Header, more http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// httpClient sends the tests' requests; no test waits longer.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// reply is an HTTP response with its JSON-RPC message: the JSON body, or
// the last event of an SSE body.
type reply struct {
	status int
	header http.Header
	body   string
	events []sseEvent
	rpc    rpcMessage
}

// rpcMessage is a JSON-RPC message as the tests read it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is a JSON-RPC error with the gateway's error data.
type rpcError struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *errorData `json:"data"`
}

// errorData is DESIGN.md's error.data shape.
type errorData struct {
	Reason string `json:"reason"`
	Status int    `json:"status"`
}

// sseEvent is one event of an SSE body.
type sseEvent struct {
	ID, Data string
}

// send makes a request and reads the whole reply.
func send(tb testing.TB, method, url string, h http.Header, body string) *reply {
	tb.Helper()
	r, err := do(method, url, h, body)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

// do is send for goroutines other than the test's: it returns its error.
// Requests are JSON accepting JSON or SSE unless h says otherwise; a Host
// entry in h sets the request's Host.
func do(method, url string, h http.Header, body string) (*reply, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = with(headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream"), h)
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	return newReply(resp, b), nil
}

// newReply decodes a response whose body was read. A body that is no
// JSON-RPC message leaves rpc zero, which the checks then report.
func newReply(resp *http.Response, b []byte) *reply {
	r := &reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	msg := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.events = parseSSE(string(b))
		msg = nil
		if n := len(r.events); n > 0 {
			msg = []byte(r.events[n-1].Data)
		}
	}
	_ = json.Unmarshal(msg, &r.rpc)
	return r
}

// parseSSE splits an SSE body into events, skipping comments and events
// without data (such as the priming event).
func parseSSE(body string) []sseEvent {
	var out []sseEvent
	var ev sseEvent
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if strings.TrimSpace(ev.Data) != "" {
				out = append(out, ev)
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data += strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

// want is what a test expects of a reply. Zero fields are not checked.
type want struct {
	status int
	header map[string]string // exact values
	// headerPrefix holds the beginnings of header values whose ends vary.
	headerPrefix map[string]string
	// code is the JSON-RPC error code, reason and dataStatus its data.
	code       int
	reason     string
	dataStatus int
	message    string // a part of error.message
}

// check compares r with w.
func (r *reply) check(tb testing.TB, w want) {
	tb.Helper()
	if w.status != 0 && r.status != w.status {
		tb.Errorf("HTTP status = %d, want %d\n%s", r.status, w.status, r.body)
	}
	for k, v := range w.header {
		if got := r.header.Get(k); got != v {
			tb.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	for k, v := range w.headerPrefix {
		if got := r.header.Get(k); !strings.HasPrefix(got, v) {
			tb.Errorf("header %s = %q, want it to begin with %q", k, got, v)
		}
	}
	if w.code == 0 {
		if r.rpc.Error != nil {
			tb.Errorf("unexpected error %+v", *r.rpc.Error)
		}
		return
	}
	r.checkError(tb, w)
}

// checkError compares r's JSON-RPC error with w.
func (r *reply) checkError(tb testing.TB, w want) {
	tb.Helper()
	e := r.rpc.Error
	if e == nil {
		tb.Fatalf("no JSON-RPC error, want code %d\n%s", w.code, r.body)
	}
	if e.Code != w.code || !strings.Contains(e.Message, w.message) {
		tb.Errorf("error = %d %q, want %d containing %q", e.Code, e.Message, w.code, w.message)
	}
	if w.reason == "" {
		return
	}
	var got errorData
	if e.Data != nil {
		got = *e.Data
	}
	if diff := cmp.Diff(errorData{Reason: w.reason, Status: w.dataStatus}, got); diff != "" {
		tb.Errorf("error.data mismatch (-want +got):\n%s", diff)
	}
}

// toolResult is the part of a CallToolResult the tests read.
type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// mustToolResult decodes r's result as a CallToolResult and returns it with
// its text blocks joined.
func (r *reply) mustToolResult(tb testing.TB) (toolResult, string) {
	tb.Helper()
	var res toolResult
	if r.rpc.Error != nil || json.Unmarshal(r.rpc.Result, &res) != nil {
		tb.Fatalf("not a tool result: HTTP %d\n%s", r.status, r.body)
	}
	var texts []string
	for _, c := range res.Content {
		texts = append(texts, c.Text)
	}
	return res, strings.Join(texts, "\n")
}

// session is a client's MCP session on one agent.
type session struct {
	g       *testGateway
	url     string
	header  http.Header
	id      string
	version string
}

// mustInitialize opens a session on agentID with the given credential
// headers and protocol version, and sends notifications/initialized.
func (g *testGateway) mustInitialize(tb testing.TB, agentID string, h http.Header, version string) *session {
	tb.Helper()
	s := &session{g: g, url: g.mcpURL(agentID), header: h, version: version}
	r := send(tb, http.MethodPost, s.url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`, version))
	if r.status != http.StatusOK || r.rpc.Error != nil {
		tb.Fatalf("initialize: HTTP %d\n%s", r.status, r.body)
	}
	if s.id = r.header.Get("Mcp-Session-Id"); s.id == "" {
		tb.Fatal("initialize: no Mcp-Session-Id")
	}
	s.post(tb, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil).check(tb, want{status: http.StatusAccepted})
	return s
}

// sessionHeader returns the headers of a request in the session, plus more.
func (s *session) sessionHeader(more http.Header) http.Header {
	h := with(s.header, headers("Mcp-Session-Id", s.id, "MCP-Protocol-Version", s.version))
	return with(h, more)
}

// post sends a message in the session with extra headers.
func (s *session) post(tb testing.TB, body string, more http.Header) *reply {
	tb.Helper()
	return send(tb, http.MethodPost, s.url, s.sessionHeader(more), body)
}

// call sends tools/call with id 1 and returns the reply.
func (s *session) call(tb testing.TB, tool, args string) *reply {
	tb.Helper()
	return s.post(tb, callBody(1, tool, args, ""), nil)
}

// callBody is a tools/call request; meta, when set, is its _meta object.
func callBody(id int, tool, args, meta string) string {
	if meta != "" {
		meta = `,"_meta":` + meta
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, id, tool, args, meta)
}

// eventually polls cond for up to 10s.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
