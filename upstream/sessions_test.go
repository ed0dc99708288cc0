//lint:file-ignore SA1019 roots/list is part of MCP 2025-11-25, the revision relayed here.

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream that forgets every session right after initialize (a load
// balancer without affinity) makes every dial fail with a "session not
// found" error: the call must fail with EUNAVAILABLE, not panic on the
// session it never got.
func TestUpstreamForgetsSessionAtInitialize(t *testing.T) {
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
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
	for _, caps := range []string{`{}`, `{"sampling":{}}`} {
		t.Run(caps, func(t *testing.T) {
			call := callOf(sk, "ok", `{}`)
			call.Client = &client{caps: caps}
			_, err := m.CallTool(context.Background(), call)
			mustCode(t, err, mcpgate.EUNAVAILABLE)
		})
	}
}

// recordHandler is a slog.Handler keeping the "line" attribute of each
// record.
type recordHandler struct {
	mu    sync.Mutex
	lines []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			h.mu.Lock()
			h.lines = append(h.lines, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// A child that writes one huge line to stderr must not stop the gateway
// reading its stderr: a child whose stderr pipe is full (or closed) hangs
// (or dies of SIGPIPE). The line is logged cut short, the next ones whole.
func TestStderrLongLineKeepsDraining(t *testing.T) {
	r, w := io.Pipe()
	h := &recordHandler{}
	done := make(chan struct{})
	go func() {
		logStderr(r, slog.New(h))
		close(done)
	}()
	long := strings.Repeat("x", 1<<20)
	for _, line := range []string{long, "after the long line", long + long, "last"} {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			t.Fatalf("writing stderr: %v", err)
		}
	}
	w.Close()
	<-done
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lines) != 4 || h.lines[1] != "after the long line" || h.lines[3] != "last" {
		t.Fatalf("logged %d lines, want 4 ending in %q", len(h.lines), "last")
	}
	for _, l := range h.lines {
		if len(l) > maxStderrLine+len("…") {
			t.Errorf("logged a line of %d bytes, want at most %d", len(l), maxStderrLine)
		}
	}
}

// countingUpstream serves a tool over HTTP, counting initialize requests
// and DELETEs of sessions; while gate is set, initialize requests wait for
// it to close.
type countingUpstream struct {
	*upstream
	mu      sync.Mutex
	inits   int
	deletes int
	gate    chan struct{}
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	c := &countingUpstream{}
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				c.mu.Lock()
				c.deletes++
				c.mu.Unlock()
			}
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if strings.Contains(string(body), `"method":"initialize"`) {
					c.mu.Lock()
					c.inits++
					gate := c.gate
					c.mu.Unlock()
					if gate != nil {
						<-gate
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newServer()
	textTool(s, "ok", `{"content":[{"type":"text","text":"ok"}]}`)
	c.upstream = mustUpstream(t, s, wrap)
	return c
}

func (c *countingUpstream) counts() (inits, deletes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inits, c.deletes
}

func (c *countingUpstream) setGate(g chan struct{}) {
	c.mu.Lock()
	c.gate = g
	c.mu.Unlock()
}

// countingClient is a host declaring sampling that counts how often its
// capabilities were read.
type countingClient struct {
	client
	reads atomic.Int32
}

func (c *countingClient) ClientCapabilities() json.RawMessage {
	c.reads.Add(1)
	return c.client.ClientCapabilities()
}

// ownCount is the number of downstream sessions with an own session.
func ownCount(l *link) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.own)
}

// Concurrent first calls of one downstream session open one upstream
// session between them (for stdio, one child process, not one per call),
// and a link opens at most maxOwn own sessions: further downstream
// sessions share the pooled one until an own session closes.
func TestOwnSessionsOneDialEachAndBounded(t *testing.T) {
	u := newCountingUpstream(t)
	m := newManager(t, nil, nil, nil)
	m.maxOwn = 2
	sk := httpSkill("s1", u.url())
	if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
		t.Fatal(err)
	}
	l := mustLink(t, m, sk)
	base, _ := u.counts()

	gate := make(chan struct{})
	u.setGate(gate)
	c := &countingClient{client: client{caps: `{"sampling":{}}`}}
	const n = 10
	errs := make(chan error, n)
	for range n {
		go func() {
			call := callOf(sk, "ok", `{}`)
			call.Client, call.SessionID = c, "sess-A"
			_, err := m.CallTool(context.Background(), call)
			errs <- err
		}()
	}
	waitFor(t, "every call to look at the session", func() bool { return c.reads.Load() >= n })
	u.setGate(nil)
	close(gate)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if inits, _ := u.counts(); inits != base+1 {
		t.Fatalf("%d concurrent calls of one session initialized %d upstream sessions, want 1", n, inits-base)
	}

	for _, sid := range []string{"sess-B", "sess-C", "sess-D"} {
		call := callOf(sk, "ok", `{}`)
		call.Client, call.SessionID = &client{caps: `{"roots":{}}`}, sid
		if _, err := m.CallTool(context.Background(), call); err != nil {
			t.Fatal(err)
		}
	}
	if inits, _ := u.counts(); inits != base+2 || ownCount(l) != 2 {
		t.Fatalf("with a limit of 2: %d upstream sessions initialized, %d own sessions; want 2 and 2", inits-base, ownCount(l))
	}

	m.CloseSession("sess-A")
	if _, deletes := u.counts(); deletes != 1 || ownCount(l) != 1 {
		t.Fatalf("after CloseSession: %d upstream sessions deleted, %d own sessions left; want 1 and 1", deletes, ownCount(l))
	}
	call := callOf(sk, "ok", `{}`)
	call.Client, call.SessionID = &client{caps: `{"roots":{}}`}, "sess-D"
	if _, err := m.CallTool(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	if inits, _ := u.counts(); inits != base+3 || ownCount(l) != 2 {
		t.Fatalf("below the limit again: %d upstream sessions initialized, %d own sessions; want 3 and 2", inits-base, ownCount(l))
	}
}

// A downstream session that ends while its own upstream session is being
// initialized must not leave that upstream session open (for stdio, a
// child process) until the skill stops.
func TestCloseSessionDuringDial(t *testing.T) {
	u := newCountingUpstream(t)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
		t.Fatal(err)
	}
	l := mustLink(t, m, sk)
	base, _ := u.counts()
	gate := make(chan struct{})
	u.setGate(gate)
	errs := make(chan error, 1)
	go func() {
		call := callOf(sk, "ok", `{}`)
		call.Client, call.SessionID = &client{caps: `{"sampling":{}}`}, "sess-X"
		_, err := m.CallTool(context.Background(), call)
		errs <- err
	}()
	waitFor(t, "the own session's initialize", func() bool { inits, _ := u.counts(); return inits > base })
	m.CloseSession("sess-X")
	u.setGate(nil)
	close(gate)
	err := <-errs
	mustCode(t, err, mcpgate.EUNAVAILABLE)
	if n := ownCount(l); n != 0 {
		t.Fatalf("%d own sessions left after the session closed", n)
	}
	if _, deletes := u.counts(); deletes != 1 {
		t.Fatalf("%d upstream sessions deleted, want 1", deletes)
	}
}

// An upstream's server→client request on the pooled session (shared by the
// calls of many MCP hosts) is refused: sent to the newest call's host, it
// would reach a host other than the one whose call caused it.
func TestPooledSessionRefusesServerRequests(t *testing.T) {
	release, started, firstDone := make(chan struct{}), make(chan struct{}, 2), make(chan struct{})
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "roots_later", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		started <- struct{}{}
		<-release
		if _, err := req.Session.ListRoots(ctx, nil); err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "roots listed"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		started <- struct{}{}
		<-firstDone
		return &sdk.CallToolResult{Content: []sdk.Content{}}, nil
	})
	u := mustUpstream(t, s, nil)
	m := newManager(t, nil, nil, nil)
	m.maxOwn = 0 // every call on the pooled session
	sk := httpSkill("s1", u.url())

	hostA := &client{caps: `{}`, answer: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"roots":[{"uri":"file:///a"}]}`), nil
	}}
	hostB := &client{caps: `{"roots":{}}`, answer: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"roots":[{"uri":"file:///home/b/secret"}]}`), nil
	}}
	type outcome struct {
		res *mcpgate.Result
		err error
	}
	first := make(chan outcome, 1)
	go func() {
		call := callOf(sk, "roots_later", `{}`)
		call.Client, call.SessionID = hostA, "sess-A"
		res, err := m.CallTool(context.Background(), call)
		first <- outcome{res, err}
	}()
	<-started
	second := make(chan error, 1)
	go func() {
		call := callOf(sk, "wait", `{}`)
		call.Client, call.SessionID = hostB, "sess-B"
		_, err := m.CallTool(context.Background(), call)
		second <- err
	}()
	<-started // the newer call is in flight upstream too
	close(release)
	got := <-first
	close(firstDone)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	hostB.mu.Lock()
	asked := hostB.methods
	hostB.mu.Unlock()
	if len(asked) > 0 || !got.res.IsError {
		t.Fatalf("host B was asked %v for another host's call, which got %s", asked, got.res.Raw)
	}
}

// The names the gateway remembers for routing follow the latest listing:
// an upstream whose resources come and go (one URI per listing here) does
// not make the table grow with every resources/list.
func TestRoutesForgetUnlistedResources(t *testing.T) {
	// Resources come only after the links connect: the server must offer
	// them from the start, or a link may find none and leave its skill out.
	s := sdk.NewServer(&sdk.Implementation{Name: "test-upstream", Version: "1"}, &sdk.ServerOptions{HasResources: true})
	u := mustUpstream(t, s, nil)
	m := newManager(t, nil, nil, nil)
	for _, name := range []string{"s1", "s2"} {
		m.linkFor(httpSkill(name, u.url()))
	}
	read := func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{}, nil
	}
	prev := ""
	for i := range 5 {
		uri := "test://item/" + itoa(i)
		if prev != "" {
			s.RemoveResources(prev)
		}
		s.AddResource(&sdk.Resource{URI: uri, Name: "item"}, read)
		prev = uri
		mustContain(t, "resources/list", mustRelay(t, m, forward("resources/list", `{}`)), "mcpgate:s1/"+uri)
	}
	names := m.agentNames("agent1")
	names.mu.Lock()
	defer names.mu.Unlock()
	if n := len(names.tables["resources/list"]); n != 2 {
		t.Fatalf("%d routes remembered after 5 listings of 2 resources each", n)
	}
}

// A call in flight is registered in one allocation (the record) and
// unregistered without one; its session's progress tokens are numbered.
func TestBeginAllocs(t *testing.T) {
	var s session
	call := &mcpgate.Call{}
	first, second := s.begin(call), s.begin(call)
	s.end(first)
	if len(s.calls) != 1 || s.calls[0] != second {
		t.Fatalf("in flight after the first ended: %v", s.calls)
	}
	s.end(second)
	if n := testing.AllocsPerRun(100, func() { s.end(s.begin(call)) }); n > 1 {
		t.Errorf("begin and end allocate %v times, want at most 1", n)
	}
	if a, b := s.progressToken(), s.progressToken(); a != "mcpgate-1" || b != "mcpgate-2" {
		t.Fatalf("tokens %q, %q", a, b)
	}
}
