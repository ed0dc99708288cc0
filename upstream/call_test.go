//lint:file-ignore SA1019 Upstream log messages are part of MCP 2025-11-25, the revision relayed here.

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func newServer() *sdk.Server {
	return sdk.NewServer(&sdk.Implementation{Name: "test-upstream", Version: "1"}, nil)
}

func TestCallToolKeepsRawResult(t *testing.T) {
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "args " + string(req.Params.Arguments), Meta: sdk.Meta{"k": "v"}}},
			StructuredContent: json.RawMessage(`{"n":12345678901234567890,"z":1,"a":2}`),
		}, nil
	})
	textTool(s, "fails", `{"content":[{"type":"text","text":"no such city"}],"isError":true}`)
	u := mustUpstream(t, s, nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())

	res, err := m.CallTool(context.Background(), callOf(sk, "big", `{"city":"Oslo"}`))
	if err != nil {
		t.Fatal(err)
	}
	// Decoding structuredContent into Go values and encoding it again would
	// turn the integer into 12345678901234567000 and sort the keys.
	mustContain(t, "Raw", string(res.Raw), `{"n":12345678901234567890,"z":1,"a":2}`, `"_meta":{"k":"v"}`, `args {\"city\":\"Oslo\"}`)
	out, _ := json.Marshal(res)
	if string(out) != string(res.Raw) {
		t.Errorf("Result encodes as %s, want the raw bytes %s", out, res.Raw)
	}

	res, err = m.CallTool(context.Background(), callOf(sk, "fails", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Errorf("IsError = false for %s", res.Raw)
	}

	_, err = m.CallTool(context.Background(), callOf(sk, "missing", `{}`))
	var rpc *mcpgate.RPCError
	if !errors.As(err, &rpc) {
		t.Fatalf("unknown tool: err = %v, want the upstream's JSON-RPC error", err)
	}
}

func TestCallToolProgressAndLogs(t *testing.T) {
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for _, p := range []float64{1, 2} {
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: p, Total: 2})
		}
		req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "w", Data: map[string]any{"n": 1}})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	u := mustUpstream(t, s, nil)
	m := newManager(t, nil, nil, nil)
	call := callOf(httpSkill("s1", u.url()), "work", `{}`)
	n := &notifier{}
	call.Notifier = n
	if _, err := m.CallTool(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if diff := cmp.Diff([]float64{1, 2}, n.progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`warning {"n":1}`}, n.logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

// quietNotifier takes log messages and says it wants no progress.
type quietNotifier struct{ notifier }

func (*quietNotifier) WantsProgress() bool { return false }

// A call whose progress goes nowhere asks the upstream for none: no
// progress token reaches the tool, while its log messages still come.
func TestCallToolAsksNoProgressNobodyReads(t *testing.T) {
	s := newServer()
	tokens := make(chan any, 2)
	s.AddTool(&sdk.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		tokens <- req.Params.GetProgressToken()
		req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "w", Data: "note"})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	u := mustUpstream(t, s, nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	quiet := &quietNotifier{}
	for _, n := range []mcpgate.Notifier{quiet, mcpgate.NopNotifier{}} {
		call := callOf(sk, "work", `{}`)
		call.Notifier = n
		if _, err := m.CallTool(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		if tok := <-tokens; tok != nil {
			t.Errorf("%T: the upstream got progress token %v, want none", n, tok)
		}
	}
	quiet.mu.Lock()
	defer quiet.mu.Unlock()
	if diff := cmp.Diff([]string{`warning "note"`}, quiet.logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

// blockingServer has a tool "block" that waits until its context ends and
// then closes canceled.
func blockingServer(started, canceled chan struct{}) *sdk.Server {
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		close(canceled)
		return nil, ctx.Err()
	})
	textTool(s, "ok", `{"content":[{"type":"text","text":"ok"}]}`)
	return s
}

// deferrer is a notifier whose reply takes deferred work (running it at
// once), counting it.
type deferrer struct {
	notifier
	deferred atomic.Int32
}

func (d *deferrer) Defer(f func()) bool {
	d.deferred.Add(1)
	f()
	return true
}

// A call answered before anything waits on its context makes no deadline
// (no timer started and stopped): nothing is left to end after its reply.
// A slow call's exchange is watched, which makes it; so of twenty calls,
// on however slow a machine, some are answered first.
func TestFastCallMakesNoDeadline(t *testing.T) {
	u := mustUpstream(t, blockingServer(make(chan struct{}), make(chan struct{})), nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("fast", u.url())
	fast := 0
	for range 20 {
		call := callOf(sk, "ok", `{}`)
		d := &deferrer{}
		call.Notifier = d
		if _, err := m.CallTool(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		if d.deferred.Load() == 0 {
			fast++
		}
	}
	if fast == 0 {
		t.Fatal("every call made its deadline's timer, to be stopped after its reply")
	}
}

func TestCallToolTimeout(t *testing.T) {
	started, canceled := make(chan struct{}), make(chan struct{})
	u := mustUpstream(t, blockingServer(started, canceled), nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("slow", u.url())
	sk.Timeout = mcpgate.Duration(300 * time.Millisecond)
	_, err := m.CallTool(context.Background(), callOf(sk, "block", `{}`))
	mustCode(t, err, mcpgate.ETIMEOUT)
	mustContain(t, "message", mcpgate.ErrorMessage(err), `"slow"`)
	<-canceled // the upstream got notifications/cancelled
}

func TestCallToolCanceled(t *testing.T) {
	started, canceled := make(chan struct{}), make(chan struct{})
	u := mustUpstream(t, blockingServer(started, canceled), nil)
	m := newManager(t, nil, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := m.CallTool(ctx, callOf(httpSkill("s1", u.url()), "block", `{}`))
	mustCode(t, err, mcpgate.ECANCELED)
	<-canceled
}

func TestUpstreamDownAtStart(t *testing.T) {
	u := mustUpstream(t, newServer(), nil)
	url := u.url()
	u.stop()
	store := newMemStore()
	m := newManager(t, store, nil, nil)
	sk := httpSkill("down", url)
	_, err := m.CallTool(context.Background(), callOf(sk, "x", `{}`))
	mustCode(t, err, mcpgate.EUNAVAILABLE)
	mustContain(t, "message", mcpgate.ErrorMessage(err), `skill "down"`)
	_, err = m.Discover(context.Background(), sk)
	mustCode(t, err, mcpgate.EUNAVAILABLE)
}

func TestUpstreamKilledMidCallThenBack(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts *sdk.StreamableHTTPOptions
	}{
		{"without event ids", nil},
		// Its streams can be resumed, but nothing answers any more.
		{"keeping its events", &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}},
	} {
		t.Run(tt.name, func(t *testing.T) { killMidCallThenBack(t, tt.opts) })
	}
}

func killMidCallThenBack(t *testing.T, opts *sdk.StreamableHTTPOptions) {
	started, canceled := make(chan struct{}), make(chan struct{})
	u := mustUpstreamWith(t, blockingServer(started, canceled), opts, nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	go func() {
		<-started
		u.stop()
	}()
	_, err := m.CallTool(context.Background(), callOf(sk, "block", `{}`))
	mustCode(t, err, mcpgate.EUNAVAILABLE)

	// The server comes back on the same address, without the old session:
	// the gateway initializes a new one.
	u.start(u.addr)
	waitFor(t, "a call through a new session", func() bool {
		res, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`))
		return err == nil && strings.Contains(string(res.Raw), `"ok"`)
	})
}

func TestUpstreamForgetsSession(t *testing.T) {
	var forget atomic.Bool
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if forget.Load() && r.Header.Get("Mcp-Session-Id") != "" && r.Method == http.MethodPost {
				forget.Store(false)
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newServer()
	textTool(s, "ok", `{"content":[{"type":"text","text":"ok"}]}`)
	u := mustUpstream(t, s, wrap)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
		t.Fatal(err)
	}
	forget.Store(true)
	res, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`))
	if err != nil {
		t.Fatalf("call after a 404: %v", err)
	}
	mustContain(t, "Raw", string(res.Raw), `"ok"`)
}

func TestUpstreamMalformedJSON(t *testing.T) {
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" && r.ContentLength > 0 {
				body, _ := io.ReadAll(r.Body)
				if strings.Contains(string(body), `"tools/call"`) {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"jsonrpc":"2.0","id":`))
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newServer()
	textTool(s, "ok", `{"content":[]}`)
	u := mustUpstream(t, s, wrap)
	m := newManager(t, nil, nil, nil)
	_, err := m.CallTool(context.Background(), callOf(httpSkill("bad", u.url()), "ok", `{}`))
	mustCode(t, err, mcpgate.EUNAVAILABLE)
}

func TestSkillHealth(t *testing.T) {
	s := newServer()
	textTool(s, "ok", `{"content":[]}`)
	u := mustUpstream(t, s, nil)
	sk := httpSkill("s1", u.url())
	store := newMemStore(sk)
	m := newManager(t, store, nil, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected with 1 tool", func() bool {
		h := store.healthOf("agent1", "s1")
		return h.State == mcpgate.HealthConnected && h.Tools == 1
	})
	for range 5 {
		if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "last call written", func() bool { return store.healthOf("agent1", "s1").LastCallAt != nil })
	store.mu.Lock()
	writes := store.healthN
	store.mu.Unlock()
	if writes > 4 {
		t.Errorf("%d health writes for a connection and 5 calls; want state changes and one call time", writes)
	}
	u.stop()
	waitFor(t, "error state", func() bool {
		h := store.healthOf("agent1", "s1")
		return h.State == mcpgate.HealthError && h.LastError != "" && h.LastErrorAt != nil
	})
	m.Sync(context.Background(), nil)
	if h := store.healthOf("agent1", "s1"); h.State != mcpgate.HealthStopped {
		t.Errorf("state after removal = %q, want stopped", h.State)
	}
}

func TestHeadersWithSecrets(t *testing.T) {
	var got atomic.Value
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Store(r.Header.Get("Authorization"))
			next.ServeHTTP(w, r)
		})
	}
	s := newServer()
	textTool(s, "ok", `{"content":[]}`)
	u := mustUpstream(t, s, wrap)
	m := New(&Options{Logger: quietLogger(), Env: func(name string) (string, bool) {
		return map[string]string{"UP_TOKEN": "s3cret"}[name], name == "UP_TOKEN"
	}})
	t.Cleanup(func() { m.Close() })
	sk := httpSkill("s1", u.url())
	sk.Headers = map[string]string{"Authorization": "Bearer ${env:UP_TOKEN}"}
	if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "Bearer s3cret" {
		t.Errorf("Authorization = %v, want the expanded secret", got.Load())
	}
	sk2 := httpSkill("s2", u.url())
	sk2.Headers = map[string]string{"Authorization": "Bearer ${env:MISSING}"}
	_, err := m.CallTool(context.Background(), callOf(sk2, "ok", `{}`))
	mustCode(t, err, mcpgate.EINVALID)
}

func TestGuardRefusesPrivateUpstream(t *testing.T) {
	u := mustUpstream(t, newServer(), nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	sk.AllowPrivate = false
	_, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`))
	mustCode(t, err, mcpgate.EUNAVAILABLE)
}

// callParams has a _meta only for what goes in it: the progress token,
// asked for only when the call's progress goes somewhere, and the trace
// context when there is one.
func TestCallParamsMeta(t *testing.T) {
	trace := mcpgate.TraceContext{Parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", State: "a=1"}
	for _, c := range []struct {
		token string
		tc    mcpgate.TraceContext
		want  string
	}{
		{"", mcpgate.TraceContext{}, `{"name":"echo","arguments":{}}`},
		{"mcpgate-7", mcpgate.TraceContext{}, `{"name":"echo","arguments":{},"_meta":{"progressToken":"mcpgate-7"}}`},
		{"", trace, `{"name":"echo","arguments":{},"_meta":{"traceparent":"` + trace.Parent + `","tracestate":"a=1"}}`},
		{"mcpgate-7", trace, `{"name":"echo","arguments":{},"_meta":{"progressToken":"mcpgate-7","traceparent":"` + trace.Parent + `","tracestate":"a=1"}}`},
	} {
		if got := string(callParams("echo", nil, c.token, c.tc)); got != c.want {
			t.Errorf("callParams(token %q, trace %q) = %s, want %s", c.token, c.tc.Parent, got, c.want)
		}
	}
}

// callParams writes the name and the token as encoding/json would, with
// or without characters to escape, and the arguments as they came.
func TestCallParamsEncoding(t *testing.T) {
	for _, name := range []string{"echo", `say "hi"`, "tab\tname", "é<&>"} {
		got := callParams(name, json.RawMessage(`{"a":1}`), "mcpgate-"+name, mcpgate.TraceContext{})
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      struct {
				ProgressToken string `json:"progressToken"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(got, &p); err != nil || p.Name != name || string(p.Arguments) != `{"a":1}` || p.Meta.ProgressToken != "mcpgate-"+name {
			t.Errorf("callParams(%q) = %s (%v)", name, got, err)
		}
	}
	if n := testing.AllocsPerRun(50, func() { callParams("echo", json.RawMessage(`{}`), "mcpgate-1", mcpgate.TraceContext{}) }); n > 1 {
		t.Errorf("%v allocations for plain params, want 1", n)
	}
}

// TestRelayReusesConnections relays calls to a plain-HTTP upstream over
// h1's keep-alive connections (no net/http read and write loops per
// connection). The upstream answers with JSON, so that each call's
// connection is back in the pool when the call returns (a reply stream's
// end may come later, TestAnswerBeforeStreamEnd in mcpclient). Discovery
// runs in the background and may hold a pooled connection while a call
// starts, so the ten calls counted run once it has stored the tools it
// found: then they open no connection for their POSTs (the session's GET
// stream, opened in the background too, holds one of its own).
func TestRelayReusesConnections(t *testing.T) {
	var mu sync.Mutex
	remotes := map[string]bool{} // every connection a POST came over
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				mu.Lock()
				remotes[r.RemoteAddr] = true
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newServer()
	textTool(s, "ok", `{"content":[]}`)
	u := mustUpstreamWith(t, s, &sdk.StreamableHTTPOptions{JSONResponse: true}, wrap)
	sk := httpSkill("s1", u.url())
	store := newMemStore(sk)
	m := newManager(t, store, nil, nil)
	if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "discovery to store the tools", func() bool { return len(store.tools(sk.AgentID, sk.Name)) > 0 })
	if m.plain[1].Idle() == 0 {
		t.Fatal("no connection of the call's or discovery's is in h1's pool")
	}
	mu.Lock()
	before := len(remotes)
	mu.Unlock()
	for range 10 {
		if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(remotes) - before; n != 0 {
		t.Errorf("10 calls opened %d connections, want 0 (all over pooled ones)", n)
	}
}
