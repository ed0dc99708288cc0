package main

// One end-to-end test per error path of the MCP endpoint, through a Main
// serving in-process: the HTTP status, the headers that matter, and the
// JSON-RPC error with its error.data {reason, status}, or the isError
// result of a tool call.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Requests the tests send.
const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	listBody       = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	pingBody       = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
)

// unauthorized is what a 401 for agentID looks like.
func (g *testGateway) unauthorized(agentID, message string) want {
	return want{
		status:     http.StatusUnauthorized,
		header:     map[string]string{"WWW-Authenticate": fmt.Sprintf(`Bearer realm="MCP", resource_metadata="%s/.well-known/oauth-protected-resource/%s/mcp", scope="mcp"`, g.URL(), agentID)},
		code:       -32000,
		reason:     "unauthorized",
		dataStatus: http.StatusUnauthorized,
		message:    message,
	}
}

// invalidCredential is what a 401 for a presented credential the gateway
// refused looks like: the challenge says invalid_token (RFC 6750), with a
// description.
func (g *testGateway) invalidCredential(agentID, message string) want {
	w := g.unauthorized(agentID, message)
	w.headerPrefix = map[string]string{"WWW-Authenticate": w.header["WWW-Authenticate"] + `, error="invalid_token", error_description="`}
	w.header = nil
	return w
}

// refused is a gateway condition other than 401, which has no
// WWW-Authenticate header.
func refused(status int, reason, message string) want {
	return want{status: status, header: map[string]string{"WWW-Authenticate": ""}, code: -32000, reason: reason, dataStatus: status, message: message}
}

// opened is a successful initialize.
var opened = want{status: http.StatusOK, header: map[string]string{"Content-Type": "application/json"}}

func TestCredentialErrors(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	_, bak := g.mustKey(t, "alice", "shop")
	_, otherBak := g.mustKey(t, "alice", "backoffice")
	port := g.URL()[strings.LastIndexByte(g.URL(), ':')+1:]
	tests := []struct {
		name   string
		agent  string
		header http.Header
		want   want
	}{
		{"no credential", "shop", nil, g.unauthorized("shop", "authentication required")},
		{"unknown user key", "shop", bearer("oag_" + strings.Repeat("A", 43)), g.invalidCredential("shop", "unknown API key")},
		{"unknown agent key", "shop", headers("X-Agent-API-Key", "bak_"+strings.Repeat("A", 43)), g.invalidCredential("shop", "unknown API key")},
		{"not an API key", "shop", bearer("hello"), g.invalidCredential("shop", "not a recognized API key")},
		{"Basic scheme", "shop", headers("Authorization", "Basic YWxpY2U6cHc="), g.unauthorized("shop", `must be "Bearer <credential>"`)},
		{"Bearer without a token", "shop", headers("Authorization", "Bearer"), g.invalidCredential("shop", `must be "Bearer <credential>"`)},
		{"two different credentials", "shop", with(bearer(oag), headers("X-Agent-API-Key", bak)), g.invalidCredential("shop", "two different credentials")},
		{"user key in X-Agent-API-Key", "shop", headers("X-Agent-API-Key", oag), g.invalidCredential("shop", "must hold an agent API key")},
		{"same agent key in both headers", "shop", with(bearer(bak), headers("X-Agent-API-Key", bak)), opened},
		{"agent key in X-Agent-API-Key", "shop", headers("X-Agent-API-Key", bak), opened},
		{"user key", "shop", bearer(oag), opened},
		{"agent not MCP-enabled", "hidden", bearer(oag), g.unauthorized("hidden", "not MCP-enabled")},
		{"agent key of another agent", "shop", bearer(otherBak), refused(http.StatusForbidden, "forbidden", `belongs to agent "backoffice"`)},
		{"user key for another user's agent", "bobs", bearer(oag), refused(http.StatusNotFound, "not_found", `agent "bobs" not found`)},
		{"unknown agent", "nosuch", bearer(oag), refused(http.StatusNotFound, "not_found", `agent "nosuch" not found`)},
		{"foreign Origin", "shop", with(bearer(oag), headers("Origin", "https://evil.example.com")), refused(http.StatusForbidden, "forbidden", "origin")},
		{"foreign Host", "shop", with(bearer(oag), headers("Host", "evil.example.com:"+port)), refused(http.StatusForbidden, "forbidden", `host "evil.example.com"`)},
		{"foreign Host without credential", "shop", headers("Host", "evil.example.com"), refused(http.StatusForbidden, "forbidden", "host")},
		{"Origin of localhost", "shop", with(bearer(oag), headers("Origin", "http://localhost:"+port)), opened},
		{"Origin of the public URL", "shop", with(bearer(oag), headers("Origin", g.URL())), opened},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, http.MethodPost, g.mcpURL(tt.agent), tt.header, initializeBody)
			r.check(t, tt.want)
			if tt.want.code == 0 && r.header.Get("Mcp-Session-Id") == "" {
				t.Error("no Mcp-Session-Id on a successful initialize")
			}
		})
	}
}

func TestRevokedKey(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	k, oag := g.mustKey(t, "alice", "")
	send(t, http.MethodPost, g.mcpURL("shop"), bearer(oag), initializeBody).check(t, opened)
	if err := g.store.RevokeKey(context.Background(), k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The authenticator trusts a cached key for 2s; the revocation must
	// take effect once that has passed.
	var r *reply
	eventually(t, "the revoked key is refused", func() bool {
		r = send(t, http.MethodPost, g.mcpURL("shop"), bearer(oag), initializeBody)
		return r.status != http.StatusOK
	})
	r.check(t, g.invalidCredential("shop", "revoked"))
}

func TestSessionErrors(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	_, bak := g.mustKey(t, "alice", "shop")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	version := headers("MCP-Protocol-Version", "2025-11-25")
	tests := []struct {
		name   string
		agent  string
		header http.Header
		want   want
	}{
		{"missing Mcp-Session-Id", "shop", with(bearer(oag), version), refused(http.StatusBadRequest, "invalid", "missing Mcp-Session-Id")},
		{"unknown session", "shop", with(bearer(oag), headers("Mcp-Session-Id", strings.Repeat("0", 32))), refused(http.StatusNotFound, "not_found", "not found or ended")},
		{"malformed session id", "shop", with(bearer(oag), headers("Mcp-Session-Id", "../../etc")), refused(http.StatusNotFound, "not_found", "not found or ended")},
		{"session of another agent", "backoffice", s.sessionHeader(nil), refused(http.StatusNotFound, "not_found", "not found or ended")},
		{"session of another identity", "shop", s.sessionHeader(bearer(bak)), refused(http.StatusForbidden, "forbidden", "another identity")},
		{"own session", "shop", s.sessionHeader(nil), want{status: http.StatusOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			send(t, http.MethodPost, g.mcpURL(tt.agent), tt.header, pingBody).check(t, tt.want)
		})
	}
	t.Run("DELETE ends the session", func(t *testing.T) {
		events := openGetStream(t, s)
		send(t, http.MethodDelete, s.url, s.sessionHeader(bearer(bak)), "").check(t, refused(http.StatusForbidden, "forbidden", "another identity"))
		send(t, http.MethodDelete, s.url, s.sessionHeader(nil), "").check(t, want{status: http.StatusOK})
		select {
		case ev, ok := <-events:
			if ok {
				t.Errorf("GET stream sent %+v, want it closed", ev)
			}
		case <-time.After(10 * time.Second):
			t.Error("the GET stream stayed open after DELETE")
		}
		s.post(t, pingBody, nil).check(t, refused(http.StatusNotFound, "not_found", "not found or ended"))
		send(t, http.MethodDelete, s.url, s.sessionHeader(nil), "").check(t, refused(http.StatusNotFound, "not_found", "not found or ended"))
	})
}

func TestTransportErrors(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t, "--max-body-bytes", "1024")
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	big := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":%q}}`, strings.Repeat("x", 2000))
	tests := []struct {
		name   string
		body   string
		header http.Header
		want   want
	}{
		{"unsupported MCP-Protocol-Version", pingBody, headers("MCP-Protocol-Version", "1999-01-01"), refused(http.StatusBadRequest, "invalid", `unsupported MCP-Protocol-Version "1999-01-01"`)},
		{"Content-Type text/plain", pingBody, headers("Content-Type", "text/plain"), refused(http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")},
		{"Accept text/html only", pingBody, headers("Accept", "text/html"), refused(http.StatusNotAcceptable, "not_acceptable", "Accept must admit")},
		{"body over --max-body-bytes", big, nil, refused(http.StatusRequestEntityTooLarge, "too_large", "exceeds 1024 bytes")},
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, nil, want{status: http.StatusBadRequest, code: -32700, message: "Parse error"}},
		{"not an object", `"ping"`, nil, want{status: http.StatusBadRequest, code: -32600, message: "Invalid Request"}},
		{"no jsonrpc member", `{"id":1,"method":"ping"}`, nil, want{status: http.StatusBadRequest, code: -32600, message: `"jsonrpc" must be "2.0"`}},
		{"id is an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, want{status: http.StatusBadRequest, code: -32600, message: `"id" must be a string or an integer`}},
		{"batch on 2025-11-25", "[" + pingBody + "]", nil, want{status: http.StatusBadRequest, code: -32600, message: "batching was removed"}},
		// prompts/list, not resources/list: every agent offers resources
		// now (the gateway's own files, for results over the response cap).
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`, nil, want{status: http.StatusOK, code: -32601, message: "Method not found"}},
		{"ping", pingBody, nil, want{status: http.StatusOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.post(t, tt.body, tt.header).check(t, tt.want)
		})
	}
	methods := []struct {
		name, method string
		header       http.Header
		want         want
	}{
		{"GET without SSE in Accept", http.MethodGet, s.sessionHeader(headers("Accept", "application/json")), refused(http.StatusNotAcceptable, "not_acceptable", "text/event-stream")},
		{"GET without a session", http.MethodGet, with(bearer(oag), headers("Accept", "text/event-stream")), refused(http.StatusBadRequest, "invalid", "missing Mcp-Session-Id")},
		{"DELETE without a session", http.MethodDelete, bearer(oag), refused(http.StatusBadRequest, "invalid", "missing Mcp-Session-Id")},
		{"PUT", http.MethodPut, s.sessionHeader(nil), want{status: http.StatusMethodNotAllowed, header: map[string]string{"Allow": "GET, POST, DELETE"}, code: -32000, reason: "method_not_allowed", dataStatus: http.StatusMethodNotAllowed}},
	}
	for _, tt := range methods {
		t.Run(tt.name, func(t *testing.T) {
			send(t, tt.method, s.url, tt.header, "").check(t, tt.want)
		})
	}
}

func TestBatchOn20250326(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-03-26")
	r := s.post(t, "["+pingBody+","+callBody(5, "echo", `{"text":"batched"}`, "")+`,{"jsonrpc":"2.0","method":"notifications/progress","params":{}}]`, nil)
	r.check(t, want{status: http.StatusOK, header: map[string]string{"Content-Type": "application/json"}})
	var msgs []rpcMessage
	if err := json.Unmarshal([]byte(r.body), &msgs); err != nil {
		t.Fatalf("batch reply is not an array: %v\n%s", err, r.body)
	}
	if len(msgs) != 2 || string(msgs[0].ID) != "3" || string(msgs[1].ID) != "5" || msgs[0].Error != nil || msgs[1].Error != nil {
		t.Fatalf("batch reply = %s", r.body)
	}
	if !strings.Contains(string(msgs[1].Result), "batched") {
		t.Errorf("tools/call in the batch returned %s", msgs[1].Result)
	}
}

func TestToolCallFailures(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	tests := []struct {
		name, tool, args string
		err              want     // a JSON-RPC error, when code is set
		isError          bool     // else the result's isError
		texts            []string // each in the result's text
	}{
		{name: "unknown tool", tool: "nosuch", args: `{}`, err: want{code: -32601, message: `unknown tool "nosuch"`}},
		{name: "arguments of the wrong type", tool: "echo", args: `{"text":5,"count":0}`, isError: true,
			texts: []string{"Invalid arguments for tool echo", "/text: got number, want string", "/count: "}},
		{name: "required argument missing", tool: "echo", args: `{"count":2}`, isError: true, texts: []string{"Invalid arguments", "missing property 'text'"}},
		{name: "backend answers 500", tool: "fail", args: `{}`, isError: true, texts: []string{"HTTP 500 Internal Server Error", "the invoice database is down"}},
		{name: "backend refuses connections", tool: "refused", args: `{}`, isError: true, texts: []string{"Connection to", "refused"}},
		{name: "backend slower than the timeout", tool: "slow", args: `{}`, isError: true, texts: []string{"timed out after 100ms"}},
		{name: "loopback without allow_private", tool: "internal", args: `{}`, isError: true, texts: []string{"SSRF guard", "allow_private: true"}},
		// A response over the cap is no longer cut: it is stored whole as a
		// file, and the text is its first part and a note naming the file.
		{name: "response over max_response_bytes", tool: "big", args: `{}`, texts: []string{bigBody[:64], "more than the skill's limit of 64", "mcpgate://files/file_"}},
		{name: "valid call", tool: "echo", args: `{"text":"hi","count":2}`, texts: []string{`"text":"hi"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.call(t, tt.tool, tt.args)
			r.check(t, want{status: http.StatusOK, header: map[string]string{"Content-Type": "application/json"}, code: tt.err.code, message: tt.err.message})
			if tt.err.code != 0 {
				return
			}
			res, text := r.mustToolResult(t)
			if res.IsError != tt.isError {
				t.Errorf("isError = %v, want %v: %s", res.IsError, tt.isError, text)
			}
			for _, want := range tt.texts {
				if !strings.Contains(text, want) {
					t.Errorf("result text lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

func TestProgressStream(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	tests := []struct {
		name, meta, accept string
		sse                bool
	}{
		{"progress token, SSE accepted", `{"progressToken":"p-1"}`, "application/json, text/event-stream", true},
		{"progress token, SSE only", `{"progressToken":7}`, "text/event-stream", true},
		{"progress token, JSON only", `{"progressToken":"p-1"}`, "application/json", false},
		{"no progress token", "", "application/json, text/event-stream", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, callBody(9, "echo", `{"text":"hi"}`, tt.meta), headers("Accept", tt.accept))
			mediaType := map[bool]string{true: "text/event-stream", false: "application/json"}[tt.sse]
			r.check(t, want{status: http.StatusOK, header: map[string]string{"Content-Type": mediaType}})
			if string(r.rpc.ID) != "9" || !strings.Contains(string(r.rpc.Result), "hi") {
				t.Fatalf("the reply does not end with the result:\n%s", r.body)
			}
			if tt.sse {
				checkProgressEvents(t, r.events, tt.meta)
			}
		})
	}
}

// checkProgressEvents checks that a call's stream has event ids, progress
// notifications carrying the request's token, then the result.
func checkProgressEvents(t *testing.T, events []sseEvent, meta string) {
	t.Helper()
	var token struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"m"`
	}
	json.Unmarshal([]byte(`{"m":`+meta+`}`), &token)
	ids := map[string]bool{}
	progress := 0
	for i, ev := range events {
		if ev.ID == "" || ids[ev.ID] {
			t.Errorf("event %d has id %q, want a unique id", i, ev.ID)
		}
		ids[ev.ID] = true
		var m rpcMessage
		json.Unmarshal([]byte(ev.Data), &m)
		if i < len(events)-1 {
			if m.Method != "notifications/progress" || !strings.Contains(string(m.Params), `"progressToken":`+string(token.Meta.ProgressToken)) {
				t.Errorf("event %d = %s, want a progress notification for token %s", i, ev.Data, token.Meta.ProgressToken)
			}
			progress++
		}
	}
	if progress == 0 {
		t.Errorf("no progress notification before the result: %+v", events)
	}
}

func TestCancelledCall(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	type outcome struct {
		r   *reply
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := do(http.MethodPost, s.url, s.sessionHeader(headers("Accept", "application/json")), callBody(7, "block", `{}`, ""))
		done <- outcome{r, err}
	}()
	select {
	case <-g.backend.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the backend")
	}
	s.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"changed my mind"}}`, nil).check(t, want{status: http.StatusAccepted})
	select {
	case err := <-g.backend.ended:
		if err != context.Canceled {
			t.Errorf("backend request context ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backend's request was not canceled")
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		o.r.check(t, want{status: http.StatusOK, code: -32800, message: "cancelled"})
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call's response did not end")
	}
}

func TestToolsListChanged(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	events := openGetStream(t, s)
	g.mustWriteConfig(t, "          - name: added\n            input_schema: {type: object}\n            request: {method: POST, path: /echo, body: all}\n")
	g.ApplyConfig(context.Background())
	timeout := time.After(10 * time.Second)
	for changed := false; !changed; {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the GET stream ended before notifications/tools/list_changed")
			}
			changed = strings.Contains(ev.Data, `"method":"notifications/tools/list_changed"`)
			if ev.ID == "" {
				t.Errorf("event without id: %+v", ev)
			}
		case <-timeout:
			t.Fatal("no notifications/tools/list_changed within 10s")
		}
	}
	// The skill made outside the config file stays: applying the file
	// touches only what the file declared.
	if names := toolNames(t, s); !slices.Contains(names, "added") || !slices.Contains(names, "internal") {
		t.Errorf("tools/list after the change = %v, want it to hold added and internal", names)
	}
}

// openGetStream opens the session's GET stream and returns its events with
// data; the channel closes when the stream ends. The stream is closed at
// the end of the test.
func openGetStream(t *testing.T, s *session) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	req.Header = s.sessionHeader(headers("Accept", "text/event-stream"))
	resp, err := httpClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := make(chan sseEvent, 16)
	go readEvents(resp, events)
	return events
}

// readEvents sends a stream's events with data until it ends.
func readEvents(resp *http.Response, events chan<- sseEvent) {
	defer close(events)
	buf := make([]byte, 4096)
	var pending string
	for {
		n, err := resp.Body.Read(buf)
		pending += string(buf[:n])
		for {
			i := strings.Index(pending, "\n\n")
			if i < 0 {
				break
			}
			for _, ev := range parseSSE(pending[:i+2]) {
				events <- ev
			}
			pending = pending[i+2:]
		}
		if err != nil {
			return
		}
	}
}

// toolNames returns the names on the session's first tools/list page.
func toolNames(t *testing.T, s *session) []string {
	t.Helper()
	r := s.post(t, listBody, nil)
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.rpc.Result, &res); err != nil {
		t.Fatalf("tools/list: HTTP %d\n%s", r.status, r.body)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, oag := g.mustKey(t, "alice", "")
	r := send(t, http.MethodGet, g.URL()+"/healthz", nil, "")
	var health map[string]string
	if err := json.Unmarshal([]byte(r.body), &health); err != nil || r.status != http.StatusOK || health["status"] != "ok" {
		t.Errorf("/healthz: HTTP %d %s", r.status, r.body)
	}
	s := g.mustInitialize(t, "shop", bearer(oag), "2025-11-25")
	s.call(t, "echo", `{"text":"hi"}`).check(t, want{status: http.StatusOK})
	s.call(t, "fail", `{}`).check(t, want{status: http.StatusOK})
	s.call(t, "nosuch", `{}`).check(t, want{status: http.StatusOK, code: -32601})
	for _, line := range []string{
		`mcpgate_tool_calls_total{agent="shop",outcome="ok",tool="echo"} 1`,
		`mcpgate_tool_calls_total{agent="shop",outcome="tool_error",tool="fail"} 1`,
		`mcpgate_tool_calls_total{agent="shop",outcome="not_found",tool="(unknown)"} 1`,
	} {
		if r := scrapeFor(t, g.URL()+"/metrics", nil, line+"\n"); !strings.Contains(r.body, line+"\n") {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}

func TestRunWithBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte("users:\n  - name: alice\n    colour: blue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env, _, _ := newTestEnv(nil)
	m := NewMain(env)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "mcpgate.yaml:3: users[0]: unknown field \"colour\"") {
		t.Errorf("Run = %v, want the file, line and field named", err)
	}
	addr := m.Addr()
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Close must free the port even though Run failed before serving.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the port is still taken after Close: %v", err)
	}
	ln.Close()
}
