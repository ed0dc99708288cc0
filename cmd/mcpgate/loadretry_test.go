package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate/h1"
)

func TestWithKey(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{}`, `{"idempotency_key":"k-1"}`},
		{` { } `, `{"idempotency_key":"k-1"}`},
		{`{"text":"x"}`, `{"idempotency_key":"k-1","text":"x"}`},
		{"{\n \"a\": {\"b\": 1}\n}", `{"idempotency_key":"k-1","a": {"b": 1}` + "\n}"},
	}
	for _, tt := range tests {
		got := withKey(tt.args, "k-1")
		if got != tt.want {
			t.Errorf("withKey(%q) = %q, want %q", tt.args, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("withKey(%q) = %q: not JSON", tt.args, got)
		}
	}
}

func TestBackoff(t *testing.T) {
	base := 100 * time.Millisecond
	tests := []struct {
		n     int
		asked time.Duration
		want  time.Duration
	}{
		{0, 0, base},
		{1, 0, 200 * time.Millisecond},
		{3, 0, 800 * time.Millisecond},
		{5, 0, maxBackoff},
		{500, 0, maxBackoff},
		{0, 1500 * time.Millisecond, 1500 * time.Millisecond}, // the gateway's retry_after_ms
		{5, 5 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := backoff(base, tt.n, tt.asked); got != tt.want {
			t.Errorf("backoff(%s, %d, %s) = %s, want %s", base, tt.n, tt.asked, got, tt.want)
		}
	}
}

// TestCallErrorClasses checks how a failed attempt is classed from what
// the gateway (or the way to it) answered, and which ones are retried.
func TestCallErrorClasses(t *testing.T) {
	gatewayErr := func(reason string, status int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"m","data":{"reason":%q,"status":%d}}}`, reason, status)
	}
	tests := []struct {
		name       string
		err        *callError
		class      string
		retry      bool
		retryAfter time.Duration
	}{
		{"proxy without a replica", httpError(502, []byte("bad gateway"), true), classHTTP, true, 0},
		{"draining replica", httpError(503, gatewayErr("unavailable", 503), true), classHTTP, true, 0},
		{"session gone", httpError(404, gatewayErr("not_found", 404), true), classSession, true, 0},
		{"agent not found before a session", httpError(404, gatewayErr("not_found", 404), false), classHTTP, false, 0},
		{"bad credential", httpError(401, gatewayErr("unauthorized", 401), true), classHTTP, false, 0},
		{"key in flight", rpcCallError("tools/call", mustRPCError(t, `{"code":-32000,"message":"m","data":{"reason":"conflict","status":409}}`)), classRPC, true, 0},
		{"rate limited", rpcCallError("tools/call", mustRPCError(t, `{"code":-32000,"message":"m","data":{"reason":"rate_limited","status":429,"retry_after_ms":700}}`)), classRPC, true, 700 * time.Millisecond},
		{"key mismatch", rpcCallError("tools/call", mustRPCError(t, `{"code":-32000,"message":"m","data":{"reason":"idempotency_mismatch","status":422}}`)), classRPC, false, 0},
		{"invalid params", rpcCallError("tools/call", mustRPCError(t, `{"code":-32602,"message":"m"}`)), classRPC, false, 0},
		{"backend timeout", rpcCallError("tools/call", mustRPCError(t, `{"code":-32003,"message":"m"}`)), classRPC, true, 0},
		{"tool error", &callError{class: classTool}, classTool, false, 0},
		{"connection refused", &callError{class: classTransport}, classTransport, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classOf(tt.err); got != tt.class {
				t.Errorf("class = %s, want %s", got, tt.class)
			}
			if got := tt.err.retryable(true); got != tt.retry {
				t.Errorf("retryable = %v, want %v", got, tt.retry)
			}
			if tt.err.retryAfter != tt.retryAfter {
				t.Errorf("retryAfter = %s, want %s", tt.err.retryAfter, tt.retryAfter)
			}
		})
	}
	if httpError(404, nil, true).retryable(false) {
		t.Error("a lost session is retried without --follow")
	}
	if classOf(errors.New("dial tcp: refused")) != classTransport {
		t.Error("an error of the HTTP client is not a transport error")
	}
}

// mustRPCError decodes a JSON-RPC error member.
func mustRPCError(t *testing.T, s string) *rpcErrorBody {
	t.Helper()
	var e rpcErrorBody
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

// TestLoadGap: the longest gap is the longest time between two successful
// calls, or from the last one to the end of the run; the time to the
// first success is not one.
func TestLoadGap(t *testing.T) {
	r := newLoadResult(nil)
	t0 := r.start
	r.elapsed = time.Second
	if gap, from := r.gap(); gap != time.Second || from != t0 {
		t.Errorf("gap without a success = %s from %s, want the whole run", gap, from.Sub(t0))
	}
	for _, ms := range []int{300, 310, 810, 820} {
		r.succeeded(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	r.elapsed = 900 * time.Millisecond
	if gap, from := r.gap(); gap != 500*time.Millisecond || from != t0.Add(310*time.Millisecond) {
		t.Errorf("gap = %s from %s, want 500ms from 310ms", gap, from.Sub(t0))
	}
	r.elapsed = 2 * time.Second
	if gap, from := r.gap(); gap != 1180*time.Millisecond || from != t0.Add(820*time.Millisecond) {
		t.Errorf("gap with a long tail = %s from %s, want 1.18s from 820ms", gap, from.Sub(t0))
	}
}

// scriptedMCP is a fake MCP endpoint for the load test's retries: the
// attempts of each tools/call are answered in turn by script, then
// successfully; every initialize opens a new session.
type scriptedMCP struct {
	mu       sync.Mutex
	script   []func(w http.ResponseWriter)
	sessions int
	calls    []scriptedCall // every tools/call received
}

// scriptedCall is one tools/call as the fake endpoint saw it.
type scriptedCall struct{ Session, Key string }

func (m *scriptedMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Arguments struct {
				Key string `json:"idempotency_key"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch msg.Method {
	case "initialize":
		m.sessions++
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", m.sessions))
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":0,"result":{}}`)
	case "tools/call":
		n := len(m.calls) % (len(m.script) + 1)
		m.calls = append(m.calls, scriptedCall{r.Header.Get("Mcp-Session-Id"), msg.Params.Arguments.Key})
		if n < len(m.script) {
			m.script[n](w)
			return
		}
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// hangUp closes the connection without an answer, as a killed replica.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// sessionGone answers as the gateway does for a session it does not know.
func sessionGone(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"session not found","data":{"reason":"not_found","status":404}}}`)
}

// keyInFlight answers as the gateway does for a key another call holds.
func keyInFlight(w http.ResponseWriter) {
	fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"in flight","data":{"reason":"conflict","status":409}}}`)
}

// keyMismatch answers as the gateway does for a key used with other arguments.
func keyMismatch(w http.ResponseWriter) {
	fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"mismatch","data":{"reason":"idempotency_mismatch","status":422}}}`)
}

// TestLoadRetriesWithKey: with --keys --retries --follow a call whose
// connection is cut, whose session is gone, and whose key is then in
// flight is tried again with the same key each time, in a new session
// after the loss, and succeeds; the report and the events say so.
func TestLoadRetriesWithKey(t *testing.T) {
	m := &scriptedMCP{script: []func(http.ResponseWriter){hangUp, sessionGone, keyInFlight}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	out, errOut, err := runCLI(t, nil, "load", "--url", srv.URL, "--sessions", "1", "--requests", "2",
		"--keys", "--retries", "5", "--retry-backoff", "1ms", "--follow", "--events", events, "--tool", "t", "--args", `{"a":1}`)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"calls: 2 ok, 0 failed",
		"failed attempts: 6 (transport 2, http 0, session 2, rpc 2, tool 0); calls retried to success: 2; lost sessions: 2",
		" failed=0 errors_transport=2 errors_http=0 errors_session=2 errors_rpc=2 errors_tool=0 retried=2 lost_sessions=2 max_gap_ms=",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("load printed:\n%s\nwant %q in it", out, want)
		}
	}
	if !strings.HasPrefix(out[strings.Index(out, "summary:"):], "summary: calls=2 calls_per_s=") {
		t.Errorf("the summary line lost its first fields:\n%s", out)
	}
	// Each call's four attempts carry one key; the third and fourth go in
	// the session initialized after the loss.
	keys := []string{m.calls[0].Key, m.calls[4].Key}
	if keys[0] == "" || keys[0] == keys[1] || !strings.HasPrefix(keys[0], "load-") {
		t.Fatalf("keys %q: want two different load- keys", keys)
	}
	want := []scriptedCall{
		{"s1", keys[0]}, {"s1", keys[0]}, {"s2", keys[0]}, {"s2", keys[0]},
		{"s2", keys[1]}, {"s2", keys[1]}, {"s3", keys[1]}, {"s3", keys[1]},
	}
	if diff := cmp.Diff(want, m.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	got := readLoadEvents(t, events)
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Event+":"+e.Class)
	}
	wantKinds := []string{"error:transport", "error:session", "lost_session:", "error:rpc", "retried:"}
	if diff := cmp.Diff(append(wantKinds, wantKinds...), kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if r := got[4]; r.Key != keys[0] || r.Attempt != 4 || r.FirstError.IsZero() || r.FirstError.After(r.At) {
		t.Errorf("retried event %+v: want key %s, 4 attempts, the first error before it", r, keys[0])
	}
}

// TestLoadGivesUp: a call is given up after --retries further attempts,
// and at once on an answer that no retry changes (a key mismatch).
func TestLoadGivesUp(t *testing.T) {
	tests := []struct {
		name   string
		script []func(http.ResponseWriter)
		calls  int
	}{
		{"retries spent", []func(http.ResponseWriter){keyInFlight, keyInFlight, keyInFlight, keyInFlight}, 3},
		{"mismatch", []func(http.ResponseWriter){keyMismatch}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &scriptedMCP{script: tt.script}
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)
			events := filepath.Join(t.TempDir(), "events.jsonl")
			out, _, err := runCLI(t, nil, "load", "--url", srv.URL, "--sessions", "1", "--requests", "1",
				"--keys", "--retries", "2", "--retry-backoff", "1ms", "--events", events, "--tool", "t", "--args", `{}`)
			if err == nil || !strings.Contains(out, "calls: 0 ok, 1 failed") || !strings.Contains(out, " failed=1 ") {
				t.Errorf("load = %v, printed:\n%s", err, out)
			}
			if len(m.calls) != tt.calls {
				t.Errorf("%d attempts, want %d", len(m.calls), tt.calls)
			}
			got := readLoadEvents(t, events)
			if last := got[len(got)-1]; last.Event != "failed" || last.Attempt != tt.calls || last.Class != classRPC {
				t.Errorf("last event %+v, want failed after %d attempts", last, tt.calls)
			}
		})
	}
}

// TestLoadRetriesOutliveDuration: with --retries, a call that started
// before --duration ran out goes on with its retries after it, so that the
// report says how it ended instead of dropping it as cut short.
func TestLoadRetriesOutliveDuration(t *testing.T) {
	m := &scriptedMCP{script: []func(http.ResponseWriter){hangUp}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	out, errOut, err := runCLI(t, nil, "load", "--url", srv.URL, "--sessions", "1", "--requests", "1", "--duration", "200ms",
		"--keys", "--retries", "1", "--retry-backoff", "400ms", "--tool", "t", "--args", `{}`)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "calls: 1 ok, 0 failed") || !strings.Contains(out, " retried=1 ") || len(m.calls) != 2 {
		t.Errorf("%d attempts; load printed:\n%s\nwant the call retried to success after the run's end", len(m.calls), out)
	}
}

// readLoadEvents reads a --events file.
func readLoadEvents(t *testing.T, path string) []loadEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var events []loadEvent
	for line := range strings.Lines(string(b)) {
		var e loadEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		events = append(events, e)
	}
	return events
}

// TestLoadKeysFlags: the retry flags refuse what could run a call twice or
// would do nothing.
func TestLoadKeysFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--retries", "3"}, // no key
		{"--keys", "--args", `{"idempotency_key":"mine"}`},
		{"--keys", "--args", `[1]`},
		{"--keys", "--method", "tools/list"},
		{"--keys", "--retries", "-1"},
		{"--keys", "--retries", "2", "--retry-backoff", "0s"},
	} {
		if _, _, err := runCLI(t, nil, append([]string{"load"}, args...)...); !errors.Is(err, errUsage) {
			t.Errorf("load %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestLoadKeysThroughGateway runs keyed calls through a real gateway in
// this process: every call's key is accepted and none needs a retry.
func TestLoadKeysThroughGateway(t *testing.T) {
	g := mustStartMain(t, benchConfig)
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--url", g.mcpURL("bench"), "--key", oag, "--sessions", "2", "--requests", "40",
		"--tool", "echo", "--args", `{"text":"hi"}`, "--keys", "--retries", "3", "--follow")
	if err != nil {
		t.Fatalf("load: %v\n%s", err, errOut)
	}
	for _, want := range []string{"calls: 40 ok, 0 failed", " failed=0 errors_transport=0 errors_http=0 errors_session=0 errors_rpc=0 errors_tool=0 retried=0 lost_sessions=0 "} {
		if !strings.Contains(out, want) {
			t.Errorf("load printed:\n%s\nwant %q in it", out, want)
		}
	}
}

// TestLoadKeepsConnections: the sessions of a load test against a plain
// http:// URL reuse their connections: forty calls of two sessions open
// no more connections than the sessions.
func TestLoadKeepsConnections(t *testing.T) {
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(&scriptedMCP{})
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	out, errOut, err := runCLI(t, nil, "load", "--url", srv.URL, "--sessions", "2", "--requests", "40", "--tool", "t")
	if err != nil || !strings.Contains(out, "calls: 40 ok, 0 failed") {
		t.Fatalf("load: %v\n%s%s", err, out, errOut)
	}
	if n := opened.Load(); n > 2 {
		t.Errorf("the load test opened %d connections for 2 sessions", n)
	}
}

// TestLoadClientTransport: plain http:// targets are called over h1, and
// HTTPS ones over net/http (TLS, HTTP/2).
func TestLoadClientTransport(t *testing.T) {
	if _, ok := loadClient("http://127.0.0.1:1/a/mcp", 2).Transport.(*h1.Transport); !ok {
		t.Error("an http:// target is not called over h1")
	}
	if _, ok := loadClient("https://gateway.test/a/mcp", 2).Transport.(*http.Transport); !ok {
		t.Error("an https:// target is not called over net/http")
	}
}
