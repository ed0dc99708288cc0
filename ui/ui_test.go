package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ui"
)

// TestSignInRedirect sends an anonymous browser to the OAuth login page
// with the page it asked for as the return path, and back there after
// signing in.
func TestSignInRedirect(t *testing.T) {
	f := mustFixture(t, nil)
	b := f.newBrowser(t)
	resp, err := b.client.Get(f.http.URL + "/ui/agents/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/oauth/login?return=%2Fui%2Fagents%2F" {
		t.Fatalf("anonymous: %d to %q", resp.StatusCode, loc)
	}
	b = f.mustSignIn(t, "alice")
	code, body := b.get(t, "/ui/agents/")
	if code != http.StatusOK {
		t.Fatalf("signed in: %d", code)
	}
	mustContain(t, body, `href="/ui/agents/shop/"`, "Sign out alice")
}

// TestCSP checks the headers of every page and that no page has an inline
// script or style, which the policy would block.
func TestCSP(t *testing.T) {
	f := mustFixture(t, nil)
	b := f.mustSignIn(t, "root")
	for _, p := range []string{"/ui/", "/ui/agents/", "/ui/agents/shop/", "/ui/keys/", "/ui/oauth/", "/ui/users/", "/ui/calls/"} {
		resp, err := b.client.Get(f.http.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: %d, CSP %q", p, resp.StatusCode, csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: no X-Frame-Options", p)
		}
		_, body := b.get(t, p)
		if strings.Contains(body, "<style") || strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, "http://") && !strings.Contains(body, f.http.URL) {
			t.Errorf("%s: inline style or script, or an outside URL:\n%s", p, body)
		}
	}
}

// TestCSRFRefused refuses forms without the browser's own CSRF token,
// and changes nothing.
func TestCSRFRefused(t *testing.T) {
	f := mustFixture(t, nil)
	alice, bob := f.mustSignIn(t, "alice"), f.mustSignIn(t, "bob")
	_, bobPage := bob.get(t, "/ui/keys/")
	for name, token := range map[string]string{"none": "", "forged": "x", "another browser's": csrfOf(t, bobPage)} {
		code, _, _ := alice.post(t, "/ui/keys/", url.Values{"csrf": {token}, "name": {"k"}})
		if code != http.StatusForbidden {
			t.Errorf("%s token: %d, want 403", name, code)
		}
		code, _, _ = alice.post(t, "/ui/agents/shop/mcp", url.Values{"csrf": {token}, "enabled": {"false"}})
		if code != http.StatusForbidden {
			t.Errorf("%s token, MCP switch: %d, want 403", name, code)
		}
	}
	keys, _ := f.store.ListKeys(context.Background(), mcpgate.KeyFilter{})
	a, _ := f.store.FindAgent(context.Background(), "shop")
	if len(keys) != 0 || !a.MCPEnabled {
		t.Fatalf("a refused form changed something: %d keys, MCP %v", len(keys), a.MCPEnabled)
	}
}

// TestAuthorization applies the management API's rules: a user sees and
// changes its own agents and keys, admins all; users are for admins.
func TestAuthorization(t *testing.T) {
	f := mustFixture(t, nil)
	alice, bob, root := f.mustSignIn(t, "alice"), f.mustSignIn(t, "bob"), f.mustSignIn(t, "root")
	if _, body := bob.get(t, "/ui/agents/"); strings.Contains(body, "shop") {
		t.Errorf("bob's agent list shows alice's agent:\n%s", body)
	}
	if code, _ := bob.get(t, "/ui/agents/shop/"); code != http.StatusNotFound {
		t.Errorf("bob views shop: %d, want 404", code)
	}
	if code, _, _ := bob.submit(t, "/ui/agents/", "/ui/agents/shop/mcp", url.Values{"enabled": {"false"}}); code != http.StatusNotFound {
		t.Errorf("bob switches shop: %d, want 404", code)
	}
	if code, _ := alice.get(t, "/ui/users/"); code != http.StatusForbidden {
		t.Errorf("alice lists users: %d, want 403", code)
	}
	if code, _, _ := alice.submit(t, "/ui/", "/ui/users/", url.Values{"name": {"eve"}, "password": {password}}); code != http.StatusForbidden {
		t.Errorf("alice creates a user: %d, want 403", code)
	}
	mustContain(t, mustGet(t, root, "/ui/agents/"), "shop", "bobs")
	code, _, _ := alice.submit(t, "/ui/keys/", "/ui/keys/", url.Values{"agent": {"shop"}})
	keys, _ := f.store.ListKeys(context.Background(), mcpgate.KeyFilter{AgentID: "shop"})
	if code != http.StatusOK || len(keys) != 1 {
		t.Fatalf("alice makes a key of shop: %d, %d keys", code, len(keys))
	}
	if code, _, _ := bob.submit(t, "/ui/keys/", "/ui/keys/", url.Values{"agent": {"shop"}}); code != http.StatusNotFound {
		t.Errorf("bob makes a key of shop: %d, want 404", code)
	}
	if code, _, _ := bob.submit(t, "/ui/keys/", "/ui/keys/"+keys[0].ID+"/revoke", url.Values{}); code != http.StatusNotFound {
		t.Errorf("bob revokes alice's key: %d, want 404", code)
	}
	if k, _ := f.store.FindKey(context.Background(), keys[0].ID); k.RevokedAt != nil {
		t.Fatal("bob revoked alice's key")
	}
}

// mustGet fetches a page that must answer 200.
func mustGet(t *testing.T, b *browser, path string) string {
	t.Helper()
	code, body := b.get(t, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

// TestKeys shows a new key's secret once, and a revoked key stops
// working at once (the authenticator forgets it).
func TestKeys(t *testing.T) {
	var forgot []string
	f := mustFixture(t, func(o *ui.Options) { o.Forget = func(h string) { forgot = append(forgot, h) } })
	alice := f.mustSignIn(t, "alice")
	code, body, _ := alice.submit(t, "/ui/keys/", "/ui/keys/", url.Values{"name": {"laptop"}})
	if code != http.StatusOK {
		t.Fatalf("create: %d\n%s", code, body)
	}
	keys, _ := f.store.ListKeys(context.Background(), mcpgate.KeyFilter{UserID: f.users["alice"].ID})
	if len(keys) != 1 || keys[0].Kind != mcpgate.KeyUser || keys[0].Name != "laptop" || keys[0].Source != mcpgate.SourceUI {
		t.Fatalf("keys: %+v", keys)
	}
	secret := secretOf(t, body)
	if !strings.HasPrefix(secret, mcpgate.UserKeyPrefix) {
		t.Fatalf("secret %q", secret)
	}
	if later := mustGet(t, alice, "/ui/keys/"); strings.Contains(later, secret) {
		t.Fatal("the key's secret is shown again")
	}
	code, _, loc := alice.submit(t, "/ui/keys/", "/ui/keys/"+keys[0].ID+"/revoke", url.Values{})
	if code != http.StatusSeeOther || loc != "/ui/keys/" {
		t.Fatalf("revoke: %d to %q", code, loc)
	}
	k, _ := f.store.FindKey(context.Background(), keys[0].ID)
	if k.RevokedAt == nil || !slices.Equal(forgot, []string{k.Hash}) {
		t.Fatalf("revoked at %v, forgot %v", k.RevokedAt, forgot)
	}
}

// secretOf returns the new key shown on the keys page.
func secretOf(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `id="new-key" value="`)
	if !ok {
		t.Fatalf("no new key on the page:\n%s", page)
	}
	secret, _, _ := strings.Cut(rest, `"`)
	return secret
}

// TestAgentMCP switches an agent's MCP endpoint off and on, telling the
// registry each time.
func TestAgentMCP(t *testing.T) {
	var changes atomic.Int64
	f := mustFixture(t, func(o *ui.Options) {
		reload := o.Changed
		o.Changed = func(ctx context.Context) error { changes.Add(1); return reload(ctx) }
	})
	alice := f.mustSignIn(t, "alice")
	page := mustGet(t, alice, "/ui/agents/shop/")
	mustContain(t, page, f.http.URL+"/shop/mcp", "&#34;mcpServers&#34;", "Disable MCP")
	for _, want := range []bool{false, true} {
		code, _, loc := alice.submit(t, "/ui/agents/shop/", "/ui/agents/shop/mcp", url.Values{"enabled": {map[bool]string{true: "true", false: "false"}[want]}})
		a, _ := f.store.FindAgent(context.Background(), "shop")
		if code != http.StatusSeeOther || loc != "/ui/agents/shop/" || a.MCPEnabled != want {
			t.Fatalf("switch to %v: %d to %q, enabled %v", want, code, loc, a.MCPEnabled)
		}
	}
	if n := changes.Load(); n != 2 {
		t.Fatalf("the registry heard of %d changes, want 2", n)
	}
	mustContain(t, mustGet(t, alice, "/ui/agents/shop/"), `<strong id="mcp-state">on</strong>`)
}

// TestUsers lets an admin create users and make one an admin, but not
// demote itself.
func TestUsers(t *testing.T) {
	f := mustFixture(t, nil)
	root := f.mustSignIn(t, "root")
	code, body, _ := root.submit(t, "/ui/users/", "/ui/users/", url.Values{"name": {"carol"}, "password": {password}})
	if code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", code, body)
	}
	f.mustSignIn(t, "carol")
	if code, body, _ := root.submit(t, "/ui/users/", "/ui/users/", url.Values{"name": {"dave"}, "password": {"short"}}); code != http.StatusBadRequest {
		t.Errorf("short password: %d\n%s", code, body)
	}
	root.submit(t, "/ui/users/", "/ui/users/"+f.users["bob"].ID+"/admin", url.Values{"admin": {"true"}})
	if u, _ := f.store.FindUserByID(context.Background(), f.users["bob"].ID); !u.Admin {
		t.Error("bob is not an admin")
	}
	if code, _, _ := root.submit(t, "/ui/users/", "/ui/users/"+f.users["root"].ID+"/admin", url.Values{"admin": {"false"}}); code != http.StatusBadRequest {
		t.Errorf("root demotes itself: %d, want 400", code)
	}
}

// TestLogout ends the shared session: the dashboard sends the browser to
// the login page again.
func TestLogout(t *testing.T) {
	f := mustFixture(t, nil)
	alice := f.mustSignIn(t, "alice")
	if code, _, _ := alice.submit(t, "/ui/", "/ui/logout/", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("logout: %d", code)
	}
	if code, _ := alice.get(t, "/ui/"); code != http.StatusSeeOther {
		t.Fatalf("after logout: %d, want 303 to the login page", code)
	}
}

// TestGrants lists the user's OAuth grants and revokes one; another user
// cannot.
func TestGrants(t *testing.T) {
	f := mustFixture(t, nil)
	ctx := context.Background()
	c := &mcpgate.OAuthClient{ID: "client-1", Name: "Inspector", RedirectURIs: []string{"http://127.0.0.1/cb"}, AuthMethod: mcpgate.AuthMethodNone}
	if err := f.store.CreateOAuthClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	g := &mcpgate.OAuthGrant{UserID: f.users["alice"].ID, ClientID: c.ID, Agents: []string{"shop"}}
	if err := f.store.SaveOAuthGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	alice, bob := f.mustSignIn(t, "alice"), f.mustSignIn(t, "bob")
	mustContain(t, mustGet(t, alice, "/ui/oauth/"), "Inspector", "shop")
	if code, _, _ := bob.submit(t, "/ui/oauth/", "/ui/oauth/grants/"+g.ID+"/revoke", url.Values{}); code != http.StatusNotFound {
		t.Errorf("bob revokes alice's grant: %d, want 404", code)
	}
	if code, _, _ := alice.submit(t, "/ui/oauth/", "/ui/oauth/grants/"+g.ID+"/revoke", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("revoke: %d", code)
	}
	if _, err := f.store.FindOAuthGrant(ctx, f.users["alice"].ID, c.ID); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Fatalf("grant still there: %v", err)
	}
	if strings.Contains(mustGet(t, alice, "/ui/oauth/"), "Registered clients") {
		t.Error("alice sees the registered clients")
	}
	if code, _, _ := alice.submit(t, "/ui/oauth/", "/ui/oauth/clients/"+c.ID+"/delete", url.Values{}); code != http.StatusForbidden {
		t.Errorf("alice removes a client: %d, want 403", code)
	}
	root := f.mustSignIn(t, "root")
	mustContain(t, mustGet(t, root, "/ui/oauth/"), "Registered clients", "Inspector", "client-1")
	if code, _, _ := root.submit(t, "/ui/oauth/", "/ui/oauth/clients/"+c.ID+"/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("root removes the client: %d", code)
	}
	if _, err := f.store.FindOAuthClient(ctx, c.ID); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Fatalf("client still there: %v", err)
	}
}

// mustCalls puts two calls in the fixture's audit log: c1 on alice's
// agent, c2 on bob's.
func (f *fixture) mustCalls(t *testing.T) {
	t.Helper()
	at := time.Now().Add(-time.Minute)
	err := f.store.InsertCalls(context.Background(), []*mcpgate.CallRecord{
		{ID: "call_c1", AgentID: "shop", Tool: "echo", UserID: "alice", Outcome: mcpgate.OutcomeOK, Arguments: []byte(`{"text":"hi"}`), Time: at},
		{ID: "call_c2", AgentID: "bobs", Tool: "secret_tool", Outcome: mcpgate.OutcomeTimeout, Time: at},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCalls says the audit log is off without one; with one, a user sees
// its agents' calls only, filtered as the query asks, and the overview
// counts the last hour's. (The filter was "status" = ok | error over the
// dashboard's own call type; it is the audit log's outcome now.)
func TestCalls(t *testing.T) {
	off := mustFixture(t, nil)
	mustContain(t, mustGet(t, off.mustSignIn(t, "alice"), "/ui/calls/"), "The audit log is off")
	f := mustFixture(t, func(o *ui.Options) { o.Calls = o.Store.(ui.CallLog) })
	f.mustCalls(t)
	alice := f.mustSignIn(t, "alice")
	page := mustGet(t, alice, "/ui/calls/?tool=echo&outcome=ok")
	mustContain(t, page, "/ui/calls/call_c1", "echo", `<option value="ok" selected>`)
	if strings.Contains(page, "secret_tool") {
		t.Fatalf("alice sees bob's call:\n%s", page)
	}
	if page := mustGet(t, alice, "/ui/calls/?outcome=timeout"); strings.Contains(page, "call_c") {
		t.Fatalf("outcome filter:\n%s", page)
	}
	if page := mustGet(t, alice, "/ui/calls/?agent=bobs"); strings.Contains(page, "secret_tool") {
		t.Fatalf("alice filters on bob's agent:\n%s", page)
	}
	mustContain(t, mustGet(t, alice, "/ui/calls/call_c1"), "&#34;text&#34;: &#34;hi&#34;", "user:alice")
	if code, _ := alice.get(t, "/ui/calls/call_c2"); code != http.StatusNotFound {
		t.Errorf("alice reads bob's call: %d, want 404", code)
	}
	mustContain(t, mustGet(t, alice, "/ui/"), "<strong>1</strong> calls in the last hour")
	mustContain(t, mustGet(t, f.mustSignIn(t, "root"), "/ui/"), "<strong>2</strong> calls in the last hour")
}

// TestCallsPages links the older calls when there are more than a page.
func TestCallsPages(t *testing.T) {
	f := mustFixture(t, func(o *ui.Options) { o.Calls = o.Store.(ui.CallLog) })
	var calls []*mcpgate.CallRecord
	for i := range 101 {
		calls = append(calls, &mcpgate.CallRecord{AgentID: "shop", Tool: fmt.Sprintf("t%03d", i), Outcome: mcpgate.OutcomeOK, Time: time.Now().Add(-time.Duration(i) * time.Second)})
	}
	if err := f.store.InsertCalls(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	alice := f.mustSignIn(t, "alice")
	page := mustGet(t, alice, "/ui/calls/?agent=shop")
	_, rest, ok := strings.Cut(page, `<a href="/ui/calls/?`)
	if !ok || strings.Contains(page, "t100") {
		t.Fatalf("first page:\n%s", page)
	}
	next, _, _ := strings.Cut(rest, `"`)
	mustContain(t, mustGet(t, alice, "/ui/calls/?"+html.UnescapeString(next)), "t100")
}

// TestOverviewApprovals shows the pending approvals only when the
// approval gate is wired. (The navigation links the approvals queue on
// every page now, so the check looks for the count's words.)
func TestOverviewApprovals(t *testing.T) {
	off := mustFixture(t, nil)
	if page := mustGet(t, off.mustSignIn(t, "alice"), "/ui/"); strings.Contains(page, "pending approvals") || strings.Contains(page, "calls in the last hour") {
		t.Fatalf("the overview shows what is not wired:\n%s", page)
	}
	f := mustFixture(t, func(o *ui.Options) { o.Approvals = &decider{store: o.Store.(mcpgate.ApprovalStore)} })
	for range 3 {
		f.mustApproval(t, "shop", "files")
	}
	f.mustApproval(t, "bobs", "files")
	mustContain(t, mustGet(t, f.mustSignIn(t, "alice"), "/ui/"), "<strong>3</strong> pending approvals")
}

// TestClientConfig shows a client configuration that parses as JSON with
// the agent's MCP URL and a readable placeholder.
func TestClientConfig(t *testing.T) {
	f := mustFixture(t, nil)
	page := mustGet(t, f.mustSignIn(t, "alice"), "/ui/agents/shop/")
	_, rest, _ := strings.Cut(page, `<textarea id="mcp-config" rows="10" readonly class="copy">`)
	text, _, _ := strings.Cut(rest, "</textarea>")
	var cfg struct {
		MCPServers map[string]struct{ Type, URL string } `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(text)), &cfg); err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	if s := cfg.MCPServers["shop"]; s.URL != f.http.URL+"/shop/mcp" || s.Type != "http" || !strings.Contains(html.UnescapeString(text), "Bearer <your API key>") {
		t.Fatalf("config:\n%s", text)
	}
}

// TestSkillHealth shows an mcp skill's upstream health from the store.
func TestSkillHealth(t *testing.T) {
	f := mustFixture(t, nil)
	ctx := context.Background()
	sk := &mcpgate.Skill{AgentID: "shop", Name: "up", Kind: mcpgate.SkillMCP, URL: "http://127.0.0.1:1/mcp", AutoApprove: true, Source: mcpgate.SourceCLI}
	if err := f.store.PutSkill(ctx, sk); err != nil {
		t.Fatal(err)
	}
	page := mustGet(t, f.mustSignIn(t, "alice"), "/ui/agents/shop/")
	mustContain(t, page, "<td>up</td><td>mcp</td><td>not connected yet</td>")
	h := &mcpgate.SkillHealth{AgentID: "shop", Skill: "up", State: mcpgate.HealthError, LastError: "connection refused"}
	if err := f.store.PutSkillHealth(ctx, h); err != nil {
		t.Fatal(err)
	}
	page = mustGet(t, f.mustSignIn(t, "alice"), "/ui/agents/shop/")
	mustContain(t, page, `<span class="state-error">error</span>, 0 tools; last error: connection refused`)
	h = &mcpgate.SkillHealth{AgentID: "shop", Skill: "up", State: mcpgate.HealthConnected, Tools: 2, ProtocolVersion: "2026-07-28"}
	if err := f.store.PutSkillHealth(ctx, h); err != nil {
		t.Fatal(err)
	}
	page = mustGet(t, f.mustSignIn(t, "alice"), "/ui/agents/shop/")
	mustContain(t, page, `<span class="state-connected">connected</span>, 2 tools, protocol 2026-07-28`)
}

// TestStatic serves the stylesheet and script to anyone, under the same
// policy, and lists no directory.
func TestStatic(t *testing.T) {
	f := mustFixture(t, nil)
	b := f.newBrowser(t)
	for path, want := range map[string]int{"/ui/static/style.css": 200, "/ui/static/copy.js": 200, "/ui/static/approvals.js": 200, "/ui/static/": 404, "/ui/static/nope.css": 404} {
		resp, err := b.client.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, CSP %q; want %d", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"), want)
		}
	}
}
