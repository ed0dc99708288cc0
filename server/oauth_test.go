package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/auth/oauth"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/sqlite"
)

// acceptMCP stands in for the MCP server: it answers 200 with the
// credential's kind.
type acceptMCP struct{}

func (acceptMCP) ServeAgent(w http.ResponseWriter, _ *http.Request, a *mcpgate.Agent, cred *mcpgate.Credential) {
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(string(cred.Kind) + " " + a.ID))
}

// oauthFixture is a server with the OAuth authorization server over a real
// SQLite store: alice owns shop and notes, bob owns bobs.
type oauthFixture struct {
	store mcpgate.Store
	http  *httptest.Server
	base  string
	alice string // alice's user ID
	key   string // a user key of alice
	reg   *registry.Registry
	srv   *Server
}

func mustOAuthFixture(tb testing.TB) *oauthFixture {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	f := &oauthFixture{store: st}
	var srv *Server
	f.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.ServeHTTP(w, r) }))
	tb.Cleanup(f.http.Close)
	f.base = f.http.URL
	oa, err := oauth.New(ctx, &oauth.Options{Store: st, PublicURL: f.base})
	if err != nil {
		tb.Fatal(err)
	}
	reg := registry.New(st, nil)
	f.reg = reg
	srv, err = New(&Options{Store: st, Tables: reg, Auth: auth.NewAuthenticator(st, &auth.Options{Tokens: oa}),
		MCP: acceptMCP{}, Metrics: metrics.New(), PublicURL: f.base, OAuth: oa})
	if err != nil {
		tb.Fatal(err)
	}
	f.srv = srv
	for user, agents := range map[string][]string{"alice": {"shop", "notes"}, "bob": {"bobs"}} {
		u := &mcpgate.User{Name: user, Source: mcpgate.SourceCLI}
		if err := st.CreateUser(ctx, u); err != nil {
			tb.Fatal(err)
		}
		for _, id := range agents {
			if err := st.CreateAgent(ctx, &mcpgate.Agent{ID: id, OwnerID: u.ID, MCPEnabled: true, Source: mcpgate.SourceCLI}); err != nil {
				tb.Fatal(err)
			}
		}
		if user == "alice" {
			f.alice = u.ID
			k, secret := auth.NewKey(mcpgate.KeyUser, u.ID, "", "test")
			if err := st.CreateKey(ctx, k); err != nil {
				tb.Fatal(err)
			}
			f.key = secret
		}
	}
	if err := reg.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	return f
}

// mustToken signs an access token for alice as the authorization server
// would: with its signing key, in a stored token family.
func (f *oauthFixture) mustToken(tb testing.TB, aud string, agents ...string) string {
	tb.Helper()
	ctx := context.Background()
	st := f.store
	fam := &mcpgate.OAuthFamily{ID: mcpgate.NewID("fam_"), GrantID: "grt_1", ClientID: "cl_1", UserID: f.alice}
	if err := st.CreateOAuthFamily(ctx, fam); err != nil {
		tb.Fatal(err)
	}
	keys, err := st.ListOAuthSigningKeys(ctx)
	if err != nil || len(keys) == 0 {
		tb.Fatalf("signing keys: %v", err)
	}
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": f.base, "sub": f.alice, "aud": aud, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
		"scope": "mcp", "agents": agents, "fid": fam.ID, "gid": fam.GrantID, "client_id": "cl_1",
	})
	t.Header["kid"] = keys[0].ID
	s, err := t.SignedString(keys[0].Secret)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// call sends a request with an Authorization bearer ("" for none).
func (f *oauthFixture) call(tb testing.TB, method, path, bearer string) *reply {
	tb.Helper()
	req, err := http.NewRequest(method, f.base+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return doRequest(tb, req)
}

func TestOAuthRoutes(t *testing.T) {
	f := mustOAuthFixture(t)
	r := f.call(t, http.MethodGet, "/.well-known/oauth-authorization-server", "")
	var meta map[string]any
	if err := json.Unmarshal([]byte(r.body), &meta); err != nil || r.status != 200 || meta["issuer"] != f.base {
		t.Fatalf("metadata: %d %s", r.status, r.body)
	}
	r = f.call(t, http.MethodGet, "/.well-known/oauth-protected-resource/shop/mcp", "")
	if r.status != 200 || !strings.Contains(r.body, `"resource":"`+f.base+`/shop/mcp"`) {
		t.Fatalf("resource metadata: %d %s", r.status, r.body)
	}
	req, err := http.NewRequest(http.MethodGet, f.base+"/.well-known/oauth-authorization-server", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example"
	if r := doRequest(t, req); r.status != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403 from the guard", r.status)
	}
}

func TestOAuthChallenges(t *testing.T) {
	f := mustOAuthFixture(t)
	meta := f.base + "/.well-known/oauth-protected-resource/shop/mcp"
	tests := []struct {
		name, path, bearer string
		status             int
		challenge          string // "" for none
	}{
		{"no credential", "/shop/mcp", "", 401, `Bearer realm="MCP", resource_metadata="` + meta + `", scope="mcp"`},
		{"token for the agent", "/shop/mcp", f.mustToken(t, f.base+"/shop/mcp", "shop"), 200, ""},
		{"token for every agent granted", "/notes/mcp", f.mustToken(t, f.base, "shop", "notes"), 200, ""},
		{"token for another agent", "/shop/mcp", f.mustToken(t, f.base+"/notes/mcp", "notes"), 401, `Bearer realm="MCP", resource_metadata="` + meta + `", scope="mcp"`},
		{"token without the agent", "/shop/mcp", f.mustToken(t, f.base, "notes"), 403, `Bearer realm="MCP", error="insufficient_scope", scope="mcp", resource_metadata="` + meta + `"`},
		{"token for bob's agent", "/bobs/mcp", f.mustToken(t, f.base, "shop"), 403, `error="insufficient_scope"`},
		{"user key of another user's agent", "/bobs/mcp", f.key, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.call(t, http.MethodPost, tt.path, tt.bearer)
			if r.status != tt.status {
				t.Fatalf("status = %d (%s), want %d", r.status, r.body, tt.status)
			}
			got := r.header.Get("WWW-Authenticate")
			if (tt.challenge == "") != (got == "") || !strings.Contains(got, tt.challenge) {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.challenge)
			}
		})
	}
}

func TestOAuthCORS(t *testing.T) {
	f := mustOAuthFixture(t)
	for _, tc := range []struct {
		name, method, path, origin string
		status                     int
		allowOrigin                string
	}{
		{"metadata from any origin", "GET", "/.well-known/oauth-authorization-server", "https://inspector.example", 200, "*"},
		{"token preflight", "OPTIONS", "/oauth/token", "https://inspector.example", 204, "*"},
		{"metadata preflight", "OPTIONS", "/.well-known/oauth-protected-resource/shop/mcp", "https://inspector.example", 204, "*"},
		{"login page from a foreign origin", "POST", "/oauth/login", "https://evil.example", 403, ""},
		{"consent from a foreign origin", "POST", "/oauth/authorize", "https://evil.example", 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			r := doRequest(t, req)
			if r.status != tc.status || r.header.Get("Access-Control-Allow-Origin") != tc.allowOrigin {
				t.Errorf("%d, Access-Control-Allow-Origin %q; want %d, %q", r.status, r.header.Get("Access-Control-Allow-Origin"), tc.status, tc.allowOrigin)
			}
		})
	}
}
