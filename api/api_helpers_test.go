package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/files"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/server"
	"github.com/mcpgate/mcpgate/skilledit"
	"github.com/mcpgate/mcpgate/sqlite"
)

// apiFixture is a server over a real SQLite store with users, agents and
// keys made through the store, served on 127.0.0.1.
type apiFixture struct {
	store    mcpgate.Store
	registry *registry.Registry
	srv      *Server
	http     *httptest.Server
	changes  atomic.Int64 // calls of Options.Changed
	// Keys: alice and bob are users, root an admin; shopKey is an agent
	// key of alice's agent shop.
	alice, bob, root, shopKey string
}

// mustAPIFixture builds the fixture: alice owns agent shop (with skill api
// and tool echo), bob owns agent bobs.
func mustAPIFixture(tb testing.TB) *apiFixture {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	f := &apiFixture{store: st, registry: registry.New(st, nil)}
	authn := auth.NewAuthenticator(st, nil)
	f.srv = New(&Options{
		Store: st, Skills: skilledit.Editor{Store: st}, Auth: authn,
		Changed: func(ctx context.Context) error { f.changes.Add(1); return f.registry.Reload(ctx) },
		Forget:  authn.Forget,
		Blobs:   files.Dir{Path: tb.TempDir()}, Signer: files.NewSigner(st, nil), MaxUploadBytes: 1000,
		Webhooks: mustWebhooks(st),
	})
	f.http = serveBehindServer(tb, st, f.registry, f.srv)
	f.srv.opts.PublicURL = f.http.URL
	f.alice = f.mustUser(tb, "alice", false)
	f.bob = f.mustUser(tb, "bob", false)
	f.root = f.mustUser(tb, "root", true)
	f.mustAgent(tb, "alice", "shop")
	f.mustAgent(tb, "bob", "bobs")
	f.shopKey = f.mustKey(tb, "alice", "shop")
	if err := f.registry.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	return f
}

// serveBehindServer serves the API as the gateway does, behind the
// server's route table and guard, on 127.0.0.1.
func serveBehindServer(tb testing.TB, st mcpgate.Store, reg *registry.Registry, api *Server) *httptest.Server {
	tb.Helper()
	srv, err := server.New(&server.Options{
		Store: st, Tables: reg, Auth: auth.NewAuthenticator(st, nil), Metrics: metrics.New(), PublicURL: "http://127.0.0.1:1", API: api,
	})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return hs
}

// mustUser creates a user and returns a user key of it.
func (f *apiFixture) mustUser(tb testing.TB, name string, admin bool) string {
	tb.Helper()
	if err := f.store.CreateUser(context.Background(), &mcpgate.User{Name: name, Admin: admin, Source: mcpgate.SourceCLI}); err != nil {
		tb.Fatal(err)
	}
	return f.mustKey(tb, name, "")
}

// mustKey makes a user key (agentID "") or an agent key through the store.
func (f *apiFixture) mustKey(tb testing.TB, user, agentID string) string {
	tb.Helper()
	u, err := f.store.FindUserByName(context.Background(), user)
	if err != nil {
		tb.Fatal(err)
	}
	kind := mcpgate.KeyUser
	if agentID != "" {
		kind = mcpgate.KeyAgent
	}
	k, secret := auth.NewKey(kind, u.ID, agentID, "test")
	if err := f.store.CreateKey(context.Background(), k); err != nil {
		tb.Fatal(err)
	}
	return secret
}

// mustAgent creates an MCP-enabled agent with a skill "api" holding a tool
// "echo".
func (f *apiFixture) mustAgent(tb testing.TB, owner, id string) {
	tb.Helper()
	ctx := context.Background()
	u, err := f.store.FindUserByName(ctx, owner)
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.store.CreateAgent(ctx, &mcpgate.Agent{ID: id, OwnerID: u.ID, MCPEnabled: true, Source: mcpgate.SourceCLI}); err != nil {
		tb.Fatal(err)
	}
	var sk mcpgate.Skill
	if err := json.Unmarshal([]byte(skillJSON("api", "echo")), &sk); err != nil {
		tb.Fatal(err)
	}
	sk.AgentID, sk.AutoApprove, sk.Source = id, true, mcpgate.SourceCLI
	if err := f.store.PutSkill(ctx, &sk); err != nil {
		tb.Fatal(err)
	}
}

// apiReply is a management API response.
type apiReply struct {
	status int
	header http.Header
	body   string
}

// apiErr is the error member of an error body.
type apiErr struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// call sends a request with a key ("" for none) and a JSON body ("" for
// none).
func (f *apiFixture) call(tb testing.TB, method, path, key, body string) *apiReply {
	tb.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return doRequest(tb, req)
}

// doRequest sends req and reads the whole reply.
func doRequest(tb testing.TB, req *http.Request) *apiReply {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return &apiReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// want fails unless the reply has the status.
func (r *apiReply) want(tb testing.TB, status int) *apiReply {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("HTTP %d, want %d\n%s", r.status, status, r.body)
	}
	return r
}

// decode reads the body into v.
func (r *apiReply) decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		tb.Fatalf("decode %s: %v", r.body, err)
	}
}

// wantError fails unless the reply is an error body with the status, code,
// field, and a message containing msg.
func (r *apiReply) wantError(tb testing.TB, status int, code, field, msg string) {
	tb.Helper()
	r.want(tb, status)
	var body struct {
		Error apiErr `json:"error"`
	}
	r.decode(tb, &body)
	e := body.Error
	if e.Code != code || e.Field != field || !strings.Contains(e.Message, msg) {
		tb.Errorf("error = %+v, want code %q field %q message containing %q", e, code, field, msg)
	}
}

// skillJSON is a rest skill on a loopback backend with tools of the given
// names, each posting its arguments to /echo.
func skillJSON(name string, tools ...string) string {
	var ts []string
	for _, t := range tools {
		ts = append(ts, toolJSON(t))
	}
	return `{"name":"` + name + `","kind":"rest","base_url":"https://api.example.com","tools":[` + strings.Join(ts, ",") + `]}`
}

// toolJSON is a tool posting its arguments to /echo.
func toolJSON(name string) string {
	return `{"name":"` + name + `","input_schema":{"type":"object","properties":{"text":{"type":"string"}}},"request":{"method":"POST","path":"/echo","body":"all"}}`
}

// toolNames returns the agent's served tool names from the registry.
func (f *apiFixture) toolNames(tb testing.TB, agentID string) []string {
	tb.Helper()
	t, ok := f.registry.Table(agentID)
	if !ok {
		tb.Fatalf("no table for agent %s", agentID)
	}
	var names []string
	for _, e := range t.Tools {
		names = append(names, e.Name)
	}
	return names
}
