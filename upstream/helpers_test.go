package upstream

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingBin is the go-sdk conformance server, built once by TestMain.
var everythingBin string

func TestMain(m *testing.M) { fixture.RunWithEverything(m, &everythingBin) }

// memStore keeps skills and health in memory, with the store's contract
// that putting an equal skill changes nothing.
type memStore struct {
	mu      sync.Mutex
	skills  map[linkKey]*mcpgate.Skill
	health  map[linkKey]mcpgate.SkillHealth
	puts    int
	healthN int
}

func newMemStore(skills ...*mcpgate.Skill) *memStore {
	s := &memStore{skills: map[linkKey]*mcpgate.Skill{}, health: map[linkKey]mcpgate.SkillHealth{}}
	for _, sk := range skills {
		cp := *sk
		s.skills[linkKey{sk.AgentID, sk.Name}] = &cp
	}
	return s
}

func (s *memStore) PutSkill(_ context.Context, sk *mcpgate.Skill) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := linkKey{sk.AgentID, sk.Name}
	if old := s.skills[k]; old != nil {
		a, _ := json.Marshal(old.Tools)
		b, _ := json.Marshal(sk.Tools)
		if string(a) == string(b) {
			sk.UpdatedAt = old.UpdatedAt
			return nil
		}
	}
	sk.UpdatedAt = time.Now()
	cp := *sk
	s.skills[k] = &cp
	s.puts++
	return nil
}

func (s *memStore) FindSkill(_ context.Context, agentID, name string) (*mcpgate.Skill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sk := s.skills[linkKey{agentID, name}]
	if sk == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no skill %q", name)
	}
	cp := *sk
	return &cp, nil
}

func (s *memStore) tools(agentID, name string) []*mcpgate.Tool {
	sk, err := s.FindSkill(context.Background(), agentID, name)
	if err != nil {
		return nil
	}
	return sk.Tools
}

func (s *memStore) PutSkillHealth(_ context.Context, h *mcpgate.SkillHealth) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.UpdatedAt = time.Now()
	s.health[linkKey{h.AgentID, h.Skill}] = *h
	s.healthN++
	return nil
}

func (s *memStore) ListSkillHealth(_ context.Context, agentID string) ([]*mcpgate.SkillHealth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*mcpgate.SkillHealth
	for k, h := range s.health {
		if k.agentID == agentID {
			out = append(out, &h)
		}
	}
	return out, nil
}

func (s *memStore) healthOf(agentID, skill string) mcpgate.SkillHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health[linkKey{agentID, skill}]
}

// notifier records what a call reports.
type notifier struct {
	mu       sync.Mutex
	progress []float64
	logs     []string
}

func (n *notifier) Progress(p, _ float64, _ string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.progress = append(n.progress, p)
}

func (n *notifier) Log(level, _ string, data any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, _ := json.Marshal(data)
	n.logs = append(n.logs, level+" "+string(b))
}

// sessions records notifications sent outside calls.
type sessions struct {
	mu   sync.Mutex
	sent []string
	ch   chan string
}

func newSessions() *sessions { return &sessions{ch: make(chan string, 100)} }

func (s *sessions) NotifySession(id, method string, params json.RawMessage) {
	s.record("session " + id + " " + method + " " + string(params))
}

func (s *sessions) NotifyAgent(id, method string, params json.RawMessage) {
	s.record("agent " + id + " " + method)
}

func (s *sessions) record(msg string) {
	s.mu.Lock()
	s.sent = append(s.sent, msg)
	s.mu.Unlock()
	select {
	case s.ch <- msg:
	default:
	}
}

// client is an MCP host that answers server→client requests.
type client struct {
	caps    string
	answer  func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	mu      sync.Mutex
	methods []string
}

func (c *client) ClientCapabilities() json.RawMessage { return json.RawMessage(c.caps) }

func (c *client) RequestClient(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	c.methods = append(c.methods, method)
	c.mu.Unlock()
	return c.answer(ctx, method, params)
}

// quietLogger drops log lines below warnings.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// newManager returns a Manager over store and notifier, closed when the
// test ends.
func newManager(tb testing.TB, store *memStore, ss mcpgate.SessionNotifier, changed func(context.Context)) *Manager {
	tb.Helper()
	o := &Options{Logger: quietLogger(), Sessions: ss, Changed: changed}
	if store != nil {
		o.Skills, o.Health = store, store
	}
	m := New(o)
	tb.Cleanup(func() { m.Close() })
	return m
}

// upstream is an in-test go-sdk server served over Streamable HTTP on a
// listener the test can stop and start again on the same address.
type upstream struct {
	tb      testing.TB
	server  *sdk.Server
	addr    string
	mu      sync.Mutex
	httpSrv *http.Server
	wrap    func(http.Handler) http.Handler
	opts    *sdk.StreamableHTTPOptions
}

// mustUpstream serves server on 127.0.0.1.
func mustUpstream(tb testing.TB, server *sdk.Server, wrap func(http.Handler) http.Handler) *upstream {
	tb.Helper()
	return mustUpstreamWith(tb, server, nil, wrap)
}

// mustUpstreamWith serves server on 127.0.0.1 with the SDK handler's
// options.
func mustUpstreamWith(tb testing.TB, server *sdk.Server, opts *sdk.StreamableHTTPOptions, wrap func(http.Handler) http.Handler) *upstream {
	tb.Helper()
	u := &upstream{tb: tb, server: server, wrap: wrap, opts: opts}
	u.start("127.0.0.1:0")
	tb.Cleanup(u.stop)
	return u
}

func (u *upstream) url() string { return "http://" + u.addr + "/mcp" }

// start serves on addr.
func (u *upstream) start(addr string) {
	u.tb.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond) // the port may linger briefly after a stop
	}
	if err != nil {
		u.tb.Fatal(err)
	}
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return u.server }, u.opts)
	if u.wrap != nil {
		h = u.wrap(h)
	}
	srv := &http.Server{Handler: h}
	u.mu.Lock()
	u.addr, u.httpSrv = ln.Addr().String(), srv
	u.mu.Unlock()
	go srv.Serve(ln)
}

// stop kills the server and every connection to it.
func (u *upstream) stop() {
	u.mu.Lock()
	srv := u.httpSrv
	u.httpSrv = nil
	u.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// httpSkill returns an mcp skill for the URL.
func httpSkill(name, url string) *mcpgate.Skill {
	return &mcpgate.Skill{AgentID: "agent1", Name: name, Kind: mcpgate.SkillMCP, URL: url, AllowPrivate: true, AutoApprove: true}
}

// stdioSkill returns an mcp skill running the everything server.
func stdioSkill(name string) *mcpgate.Skill {
	return &mcpgate.Skill{AgentID: "agent1", Name: name, Kind: mcpgate.SkillMCP, Command: everythingBin, AutoApprove: true}
}

// callOf returns a call of the tool with arguments.
func callOf(sk *mcpgate.Skill, tool, args string) *mcpgate.Call {
	return &mcpgate.Call{Skill: sk, Tool: &mcpgate.Tool{Name: tool, Upstream: tool}, ToolName: sk.Prefix + tool,
		Arguments: json.RawMessage(args), SessionID: "sess-1", Notifier: mcpgate.NopNotifier{}}
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mustCode fails unless err carries the code.
func mustCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := mcpgate.ErrorCode(err); got != code {
		tb.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

// mustContain fails unless s holds each of parts.
func mustContain(tb testing.TB, what, s string, parts ...string) {
	tb.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			tb.Fatalf("%s = %s: want it to contain %q", what, s, p)
		}
	}
}

// textTool adds a tool that answers with fixed raw JSON.
func textTool(s *sdk.Server, name string, result string) {
	s.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var r sdk.CallToolResult
		if err := json.Unmarshal([]byte(result), &r); err != nil {
			return nil, err
		}
		return &r, nil
	})
}

// mustLink returns the running link of a skill.
func mustLink(tb testing.TB, m *Manager, sk *mcpgate.Skill) *link {
	tb.Helper()
	l := m.linkFor(sk)
	if l == nil {
		tb.Fatal("no link")
	}
	return l
}

// itoa formats n in decimal.
func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// mustUpdate sends resources/updated for uri from s until a notification
// reaches ss, and returns the first one. Until the upstream session's GET
// stream is open the server has nowhere to send it (without an event
// store the SDK's server keeps nothing for a stream not yet open) and
// drops it, so a single update can race the stream's opening.
func mustUpdate(tb testing.TB, s *sdk.Server, ss *sessions, uri string) string {
	tb.Helper()
	for range 200 {
		if err := s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			tb.Fatal(err)
		}
		select {
		case msg := <-ss.ch:
			return msg
		case <-time.After(50 * time.Millisecond): // not a timing: the next try
		}
	}
	tb.Fatalf("no notification of %s after 200 updates", uri)
	return ""
}
