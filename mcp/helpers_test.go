package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// memStore is an in-memory SessionStore for this package's tests.
type memStore struct {
	mu       sync.Mutex
	sessions map[string]mcpgate.Session
	updates  int
}

func newMemStore() *memStore { return &memStore{sessions: make(map[string]mcpgate.Session)} }

func (m *memStore) CreateSession(_ context.Context, s *mcpgate.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "session exists")
	}
	m.sessions[s.ID] = *s
	return nil
}

func (m *memStore) FindSession(_ context.Context, id string) (*mcpgate.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "session not found")
	}
	return &s, nil
}

func (m *memStore) SetSessionLogLevel(_ context.Context, id, level string) error {
	return m.update(id, func(s *mcpgate.Session) { s.LogLevel = level })
}

func (m *memStore) TouchSession(_ context.Context, id string, at time.Time) error {
	return m.update(id, func(s *mcpgate.Session) { s.LastSeenAt = at })
}

func (m *memStore) update(id string, fn func(*mcpgate.Session)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.sessions[id]
	if !ok {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "session not found")
	}
	fn(&old)
	m.sessions[id] = old
	m.updates++
	return nil
}

func (m *memStore) EndSession(_ context.Context, id string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "session not found")
	}
	s.EndedAt = &at
	m.sessions[id] = s
	return nil
}

func (m *memStore) DeleteSessions(context.Context, time.Time) (int, error) { return 0, nil }

func (m *memStore) get(id string) mcpgate.Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sessions[id]
}

// fakeGateway serves a fixed tool list and runs tools by name.
type fakeGateway struct {
	tools []ListedTool
	mu    sync.Mutex
	run   map[string]func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)
	pause atomic.Bool // what MayPause says
}

func (g *fakeGateway) MayPause(*mcpgate.Agent) bool { return g.pause.Load() }

func (g *fakeGateway) ListTools(context.Context, *mcpgate.Agent) ([]ListedTool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tools, nil
}

func (g *fakeGateway) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	g.mu.Lock()
	fn := g.run[call.ToolName]
	g.mu.Unlock()
	if fn == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "tool %q not found", call.ToolName)
	}
	return fn(ctx, call)
}

func (g *fakeGateway) setTool(name string, fn func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.run[name] = fn
}

// echoTool answers with the arguments it got as text.
func echoTool(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(string(call.Arguments))}}, nil
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is a Server behind a real HTTP server on 127.0.0.1. Requests
// name their identity in X-Test-Identity (default alice); the agents are
// "a1" and "a2".
type harness struct {
	srv   *Server
	store *memStore
	gw    *fakeGateway
	clock *fakeClock
	url   string
	hs    *httptest.Server
	// client sends the requests; nil means http.DefaultClient.
	client *http.Client
}

// serveHTTP2 moves the harness to a TLS server that speaks HTTP/2, and its
// requests to a client of that server's.
func (h *harness) serveHTTP2(tb testing.TB) {
	tb.Helper()
	hs := httptest.NewUnstartedServer(h.hs.Config.Handler)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	tb.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	h.hs, h.url, h.client = hs, hs.URL+"/a1/mcp", hs.Client()
}

func mustHarness(tb testing.TB, opts *Options) *harness {
	tb.Helper()
	h := &harness{
		store: newMemStore(),
		gw:    &fakeGateway{run: map[string]func(context.Context, *mcpgate.Call) (*mcpgate.Result, error){"echo": echoTool}},
		clock: &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
	if opts == nil {
		opts = &Options{}
	}
	opts.Sessions, opts.Now = h.store, h.clock.Now
	if opts.Gateway == nil {
		opts.Gateway = h.gw
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	if opts.ServerVersion == "" {
		opts.ServerVersion = "9.9"
	}
	h.srv = New(opts)
	agents := map[string]*mcpgate.Agent{
		"a1": {ID: "a1", Name: "Invoices", Description: "Reads invoices.", MCPEnabled: true},
		"a2": {ID: "a2", MCPEnabled: true},
	}
	h.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		user := r.Header.Get("X-Test-Identity")
		if user == "" {
			user = "alice"
		}
		h.srv.ServeAgent(w, r, agents[id], &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: user})
	}))
	h.url = h.hs.URL + "/a1/mcp"
	tb.Cleanup(func() {
		h.hs.CloseClientConnections()
		h.srv.Close()
		h.hs.Close()
	})
	return h
}

// req is one HTTP request to the endpoint.
type req struct {
	method  string // default POST
	url     string // default the harness's a1 endpoint
	session string
	body    string
	header  map[string]string // overrides; "" deletes
}

func (h *harness) do(tb testing.TB, r req) *http.Response {
	tb.Helper()
	return h.doCtx(tb, context.Background(), r)
}

func (h *harness) doCtx(tb testing.TB, ctx context.Context, r req) *http.Response {
	tb.Helper()
	resp, err := h.send(ctx, r)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

// send sends r; the caller closes the body.
func (h *harness) send(ctx context.Context, r req) (*http.Response, error) {
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.url == "" {
		r.url = h.url
	}
	hr, err := http.NewRequestWithContext(ctx, r.method, r.url, strings.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	if r.session != "" {
		hr.Header.Set("Mcp-Session-Id", r.session)
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	if h.client != nil {
		return h.client.Do(hr)
	}
	return http.DefaultClient.Do(hr)
}

// async sends r from another goroutine; the channel receives the response,
// or nil after reporting the error (Fatal is only for the test's goroutine).
func (h *harness) async(t *testing.T, r req) <-chan *http.Response {
	out := make(chan *http.Response, 1)
	go func() {
		resp, err := h.send(context.Background(), r)
		if err != nil {
			t.Error(err)
		}
		out <- resp
	}()
	return out
}

// mustInit opens a session at the given version and returns its id.
func (h *harness) mustInit(tb testing.TB, version string, header map[string]string) string {
	tb.Helper()
	return h.mustInitCaps(tb, version, "{}", header)
}

// mustInitCaps opens a session at the given version, declaring the given
// client capabilities, and returns its id.
func (h *harness) mustInitCaps(tb testing.TB, version, caps string, header map[string]string) string {
	tb.Helper()
	resp := h.do(tb, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"t","version":"1"}}}`, header: header})
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("initialize: status %d: %s", resp.StatusCode, mustRead(tb, resp))
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		tb.Fatal("initialize: no Mcp-Session-Id")
	}
	return id
}

// mustRPC sends a request in a session and returns its decoded JSON reply.
func (h *harness) mustRPC(tb testing.TB, sid, body string) map[string]any {
	tb.Helper()
	resp := h.do(tb, req{session: sid, body: body})
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("status %d: %s", resp.StatusCode, mustRead(tb, resp))
	}
	return mustJSON(tb, mustRead(tb, resp))
}

// mustRawRPC sends a request in a session, accepting only a JSON reply, and
// returns the reply as it came.
func (h *harness) mustRawRPC(tb testing.TB, sid, body string) string {
	tb.Helper()
	resp := h.do(tb, req{session: sid, body: body, header: map[string]string{"Accept": "application/json"}})
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("status %d", resp.StatusCode)
	}
	return mustRead(tb, resp)
}

func mustRead(tb testing.TB, resp *http.Response) string {
	tb.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func mustJSON(tb testing.TB, s string) map[string]any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		tb.Fatalf("not a JSON object: %v: %q", err, s)
	}
	return v
}

// errCode returns a JSON-RPC reply's error code, or 0.
func errCode(v map[string]any) int {
	e, _ := v["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// sseEvent is one event, or one comment, read from an SSE stream.
type sseEvent struct {
	ID      string
	Retry   string
	Data    string
	Comment string
}

// sseReader reads events from an SSE response.
type sseReader struct{ r *bufio.Reader }

func newSSEReader(resp *http.Response) *sseReader { return &sseReader{bufio.NewReader(resp.Body)} }

// next returns the next event or comment; io.EOF at the end of the stream.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && seen:
			ev.Data = strings.Join(data, "\n")
			return ev, nil
		case line == "":
		case strings.HasPrefix(line, ":"):
			return sseEvent{Comment: strings.TrimSpace(line[1:])}, nil
		case strings.HasPrefix(line, "retry:"):
			ev.Retry, seen = strings.TrimSpace(line[6:]), true
		case strings.HasPrefix(line, "id:"):
			ev.ID, seen = strings.TrimSpace(line[3:]), true
		case strings.HasPrefix(line, "data:"):
			data, seen = append(data, strings.TrimPrefix(line[5:], " ")), true
		}
	}
}

// mustEvents reads events (skipping comments) to the end of the stream.
func (s *sseReader) mustEvents(tb testing.TB) []sseEvent {
	tb.Helper()
	var evs []sseEvent
	for {
		ev, err := s.next()
		if err == io.EOF {
			return evs
		} else if err != nil {
			tb.Fatal(err)
		}
		if ev.Comment == "" {
			evs = append(evs, ev)
		}
	}
}

// mustEvent reads the next event, skipping comments.
func (s *sseReader) mustEvent(tb testing.TB) sseEvent {
	tb.Helper()
	for {
		ev, err := s.next()
		if err != nil {
			tb.Fatalf("reading SSE event: %v", err)
		}
		if ev.Comment == "" {
			return ev
		}
	}
}

func diff(tb testing.TB, what string, want, got any) {
	tb.Helper()
	if d := cmp.Diff(want, got); d != "" {
		tb.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}
