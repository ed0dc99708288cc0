package oauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// TestHappyPath walks a public client through registration, login,
// consent, token, an MCP call, refresh, and a second authorization that
// skips the consent page.
func TestHappyPath(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	p := newPKCE()
	params := f.authParams(c, p, f.agentURL("shop"))
	b := f.newBrowser(t)

	login := b.get(t, f.base+"/oauth/authorize?"+params.Encode())
	login.mustBe(t, http.StatusOK, "Test client", `name="username"`, `name="password"`, ">Sign in<")
	next := f.login(t, b, login, "alice", alicePassword)
	if next.status != http.StatusSeeOther || !strings.HasPrefix(next.location, "/oauth/authorize?") {
		t.Fatalf("login: %d to %q, want 303 to the authorization request", next.status, next.location)
	}
	consent := b.get(t, f.base+next.location)
	consent.mustBe(t, http.StatusOK, "Test client", c.RedirectURI, ">Allow<", ">Deny<",
		`value="shop" checked`, `value="notes">`)
	if strings.Contains(consent.body, `value="off"`) || strings.Contains(consent.body, `value="bobs"`) {
		t.Errorf("consent lists an agent that is disabled or not alice's:\n%s", consent.body)
	}
	q := redirected(t, f.consent(t, b, consent, "allow", "shop", "notes"), c)
	if q.Get("state") != params.Get("state") || q.Get("iss") != f.base || q.Get("code") == "" {
		t.Fatalf("redirect parameters = %v, want code, state %q and iss %q", q, params.Get("state"), f.base)
	}

	tok := f.exchange(t, c, q.Get("code"), p)
	if tok.status != http.StatusOK || tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || tok.Scope != "mcp" || tok.RefreshToken == "" {
		t.Fatalf("token response = %+v", tok)
	}
	claims := mustClaims(t, tok.AccessToken)
	if claims["aud"].([]any)[0] != f.agentURL("shop") || claims["iss"] != f.base || claims["client_id"] != c.ID {
		t.Errorf("claims = %v", claims)
	}
	status, body := f.callMCP(t, "shop", tok.AccessToken)
	mustStatus(t, "call shop", status, body, http.StatusOK)
	var cred mcpgate.Credential
	mustJSON(t, body, &cred)
	alice, err := f.store.FindUserByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := mcpgate.Credential{Kind: mcpgate.CredentialOAuth, ID: cred.ID, UserID: alice.ID, Agents: []string{"shop"}}
	if diff := cmp.Diff(want, cred); diff != "" || !strings.HasPrefix(cred.ID, "grt_") {
		t.Errorf("credential (-want +got):\n%s", diff)
	}

	fresh := f.refresh(t, c, tok.RefreshToken)
	if fresh.status != http.StatusOK || fresh.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh = %+v, want new tokens", fresh)
	}
	status, body = f.callMCP(t, "shop", fresh.AccessToken)
	mustStatus(t, "call with the refreshed token", status, body, http.StatusOK)

	// The grant remembers the agents: a new authorization for notes skips
	// the consent page.
	again := b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("notes")).Encode())
	if q := redirected(t, again, c); q.Get("code") == "" {
		t.Fatalf("second authorization: %v, want a code at once", q)
	}
}

// TestAllAgentsResource gets a token for the gateway's base URL: it works
// on every agent granted and on no other.
func TestAllAgentsResource(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	tok := f.mustTokens(t, c, f.base+"/", "shop", "notes")
	if aud := mustClaims(t, tok.AccessToken)["aud"].([]any)[0]; aud != f.base {
		t.Errorf("aud = %v, want %s", aud, f.base)
	}
	for _, tc := range []struct {
		agent  string
		status int
	}{{"shop", 200}, {"notes", 200}, {"off", 403}, {"bobs", 403}, {"missing", 404}} {
		status, body := f.callMCP(t, tc.agent, tok.AccessToken)
		mustStatus(t, tc.agent, status, body, tc.status)
	}
}

// TestConfidentialClients authenticates with client_secret_basic and
// client_secret_post, and refuses a wrong or missing secret.
func TestConfidentialClients(t *testing.T) {
	f := mustFixture(t, nil)
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		t.Run(method, func(t *testing.T) {
			c := f.mustRegister(t, method)
			if c.Secret == "" {
				t.Fatal("no client secret issued")
			}
			p := newPKCE()
			code := f.mustCode(t, c, p, f.agentURL("shop"), "shop")
			wrong := &client{ID: c.ID, Secret: "wrong", RedirectURI: c.RedirectURI}
			f.exchange(t, wrong, code, p).mustError(t, http.StatusUnauthorized, "invalid_client")
			missing := &client{ID: c.ID, RedirectURI: c.RedirectURI}
			f.exchange(t, missing, code, p).mustError(t, http.StatusUnauthorized, "invalid_client")
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {p.verifier},
				"redirect_uri": {c.RedirectURI}, "client_id": {c.ID}, "client_secret": {c.Secret}}
			req, err := http.NewRequest(http.MethodPost, f.base+"/oauth/token", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			status, body := do(t, f.http.Client(), req)
			mustStatus(t, "secret in the form", status, body, http.StatusOK)
		})
	}
}

// TestConsentDeny sends access_denied back with the state and issuer.
func TestConsentDeny(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	params := f.authParams(c, newPKCE(), f.agentURL("shop"))
	b := f.newBrowser(t)
	next := f.login(t, b, b.get(t, f.base+"/oauth/authorize?"+params.Encode()), "alice", alicePassword)
	q := redirected(t, f.consent(t, b, b.get(t, f.base+next.location), "deny"), c)
	if q.Get("error") != "access_denied" || q.Get("state") != params.Get("state") || q.Get("iss") != f.base || q.Get("code") != "" {
		t.Errorf("redirect parameters = %v", q)
	}
}

// TestConsentNeedsTheRequestedAgent re-shows the consent page when no
// agent, or not the requested one, is picked.
func TestConsentNeedsTheRequestedAgent(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	b := f.newBrowser(t)
	next := f.login(t, b, b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("shop")).Encode()), "alice", alicePassword)
	consent := b.get(t, f.base+next.location)
	f.consent(t, b, consent, "allow").mustBe(t, http.StatusBadRequest, "Pick at least one agent")
	f.consent(t, b, consent, "allow", "notes").mustBe(t, http.StatusBadRequest, "keep it checked")
	f.consent(t, b, consent, "allow", "bobs", "off").mustBe(t, http.StatusBadRequest, "Pick at least one agent")
}

// TestPagesAndCookies checks the pages' anti-framing headers and the
// cookies' attributes.
func TestPagesAndCookies(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	b := f.newBrowser(t)
	login := b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("shop")).Encode())
	if csp := login.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if login.header.Get("X-Frame-Options") != "DENY" || login.header.Get("Cache-Control") != "no-store" || login.header.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("headers = %v", login.header)
	}
	next := f.login(t, b, login, "alice", alicePassword)
	cookies := append(mustCookies(t, login.header), mustCookies(t, next.header)...)
	names := map[string]bool{}
	for _, ck := range cookies {
		names[ck.Name] = true
		if !strings.HasPrefix(ck.Name, "__Host-") || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Domain != "" {
			t.Errorf("cookie %+v: want __Host-, Secure, HttpOnly, SameSite=Lax, Path=/, no Domain", ck)
		}
	}
	if !names["__Host-mcpgate_csrf"] || !names["__Host-mcpgate_session"] {
		t.Errorf("cookies set = %v", names)
	}
}

// mustCookies parses a response's Set-Cookie headers.
func mustCookies(tb testing.TB, h http.Header) []*http.Cookie {
	tb.Helper()
	return (&http.Response{Header: h}).Cookies()
}

// mustClaims decodes a JWT's claims without checking it.
func mustClaims(tb testing.TB, token string) map[string]any {
	tb.Helper()
	return mustSegment(tb, token, 1)
}

// mustHeader decodes a JWT's header.
func mustHeader(tb testing.TB, token string) map[string]any {
	tb.Helper()
	return mustSegment(tb, token, 0)
}

// mustSegment decodes one JSON segment of a JWT.
func mustSegment(tb testing.TB, token string, i int) map[string]any {
	tb.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		tb.Fatalf("token %q is not a JWT", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestNarrowerConsentNarrowsRefresh: after the user grants the client
// fewer agents, tokens refreshed from an older consent lose the others.
func TestNarrowerConsentNarrowsRefresh(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	wide := f.mustTokens(t, c, f.base, "shop", "notes")
	alice, err := f.store.FindUserByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.SaveOAuthGrant(context.Background(), &mcpgate.OAuthGrant{UserID: alice.ID, ClientID: c.ID, Agents: []string{"shop"}}); err != nil {
		t.Fatal(err)
	}
	fresh := f.refresh(t, c, wide.RefreshToken)
	if fresh.status != http.StatusOK {
		t.Fatalf("refresh: %+v", fresh)
	}
	if got := fmt.Sprint(mustClaims(t, fresh.AccessToken)["agents"]); got != "[shop]" {
		t.Errorf("agents after a narrower consent = %s, want [shop]", got)
	}
	status, body := f.callMCP(t, "notes", fresh.AccessToken)
	mustStatus(t, "notes after a narrower consent", status, body, http.StatusForbidden)
}
