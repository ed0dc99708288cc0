package oauth_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth/oauth"
)

// TestAuthorizeRefusals: requests whose client or redirect URI is in doubt
// are refused on a page; the others go back to the client with an error.
func TestAuthorizeRefusals(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	tests := []struct {
		name     string
		change   func(q url.Values)
		page     string // refused on a page with this text
		redirect string // or with this error on the redirect URI
	}{
		{"plain PKCE", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "", "invalid_request"},
		{"no challenge method", func(q url.Values) { q.Del("code_challenge_method") }, "", "invalid_request"},
		{"no challenge", func(q url.Values) { q.Del("code_challenge") }, "", "invalid_request"},
		{"malformed challenge", func(q url.Values) { q.Set("code_challenge", "short") }, "", "invalid_request"},
		{"redirect URI mismatch", func(q url.Values) { q.Set("redirect_uri", c.RedirectURI+"/other") }, "is not one the client registered", ""},
		{"redirect URI with another port", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:10/callback") }, "is not one the client registered", ""},
		{"no redirect URI", func(q url.Values) { q.Del("redirect_uri") }, "is not one the client registered", ""},
		{"unknown client", func(q url.Values) { q.Set("client_id", "cl_missing") }, "unknown client", ""},
		{"no client", func(q url.Values) { q.Del("client_id") }, "client_id is required", ""},
		{"repeated client_id", func(q url.Values) { q.Add("client_id", c.ID) }, "is repeated", ""},
		{"implicit flow", func(q url.Values) { q.Set("response_type", "token") }, "", "unsupported_response_type"},
		{"no resource", func(q url.Values) { q.Del("resource") }, "", "invalid_target"},
		{"resource elsewhere", func(q url.Values) { q.Set("resource", "https://other.example/shop/mcp") }, "", "invalid_target"},
		{"resource not an MCP URL", func(q url.Values) { q.Set("resource", f.base+"/api/v1") }, "", "invalid_target"},
		{"unknown scope", func(q url.Values) { q.Set("scope", "mcp admin") }, "", "invalid_scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := f.authParams(c, newPKCE(), f.agentURL("shop"))
			tt.change(q)
			p := f.newBrowser(t).get(t, f.base+"/oauth/authorize?"+q.Encode())
			if tt.page != "" {
				p.mustBe(t, http.StatusBadRequest, tt.page)
				if p.location != "" {
					t.Errorf("redirected to %s", p.location)
				}
				return
			}
			got := redirected(t, p, c)
			if got.Get("error") != tt.redirect || got.Get("state") != q.Get("state") || got.Get("iss") != f.base {
				t.Errorf("redirect parameters = %v, want error %q with state and iss", got, tt.redirect)
			}
		})
	}
}

// TestTokenRefusals: a code is refused for a wrong verifier, another
// redirect URI, another resource, another client, after 60 seconds, and
// when reused, which also revokes the tokens issued from it.
func TestTokenRefusals(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	other := f.mustRegister(t, "none")
	form := func(code string, p pkce) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {p.verifier}, "redirect_uri": {c.RedirectURI}}
	}
	tests := []struct {
		name   string
		change func(v url.Values)
		as     *client
		wait   time.Duration
		status int
		err    string
	}{
		{"wrong verifier", func(v url.Values) { v.Set("code_verifier", newPKCE().verifier) }, c, 0, 400, "invalid_grant"},
		{"no verifier", func(v url.Values) { v.Del("code_verifier") }, c, 0, 400, "invalid_request"},
		{"redirect URI mismatch", func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:9/other") }, c, 0, 400, "invalid_grant"},
		{"another resource", func(v url.Values) { v.Set("resource", f.agentURL("notes")) }, c, 0, 400, "invalid_target"},
		{"another client", func(url.Values) {}, other, 0, 400, "invalid_grant"},
		{"unknown code", func(v url.Values) { v.Set("code", "nope") }, c, 0, 400, "invalid_grant"},
		{"expired code", func(url.Values) {}, c, 61 * time.Second, 400, "invalid_grant"},
		{"password grant", func(v url.Values) { v.Set("grant_type", "password") }, c, 0, 400, "unsupported_grant_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPKCE()
			v := form(f.mustCode(t, c, p, f.agentURL("shop"), "shop"), p)
			tt.change(v)
			f.clock.Add(tt.wait)
			f.token(t, tt.as, v).mustError(t, tt.status, tt.err)
		})
	}
	t.Run("reused code", func(t *testing.T) {
		p := newPKCE()
		code := f.mustCode(t, c, p, f.agentURL("shop"), "shop")
		first := f.exchange(t, c, code, p)
		if first.status != http.StatusOK {
			t.Fatalf("first exchange: %+v", first)
		}
		f.exchange(t, c, code, p).mustError(t, http.StatusBadRequest, "invalid_grant")
		status, body := f.callMCP(t, "shop", first.AccessToken)
		mustStatus(t, "access token of a replayed code", status, body, http.StatusUnauthorized)
		f.refresh(t, c, first.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")
	})
}

// TestRefreshReuseRevokesFamily: a refresh token works once; using it
// again revokes every token rotated from it.
func TestRefreshReuseRevokesFamily(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	first := f.mustTokens(t, c, f.agentURL("shop"), "shop")
	second := f.refresh(t, c, first.RefreshToken)
	if second.status != http.StatusOK {
		t.Fatalf("refresh: %+v", second)
	}
	f.refresh(t, c, first.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")
	for name, tok := range map[string]string{"first": first.AccessToken, "rotated": second.AccessToken} {
		status, body := f.callMCP(t, "shop", tok)
		mustStatus(t, name+" access token", status, body, http.StatusUnauthorized)
	}
	f.refresh(t, c, second.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")

	other := f.mustRegister(t, "none")
	fresh := f.mustTokens(t, c, f.agentURL("shop"), "shop")
	f.refresh(t, other, fresh.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")
	f.token(t, c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "scope": {"admin"}}).
		mustError(t, http.StatusBadRequest, "invalid_scope")
	f.refresh(t, c, "unknown").mustError(t, http.StatusBadRequest, "invalid_grant")
}

// TestAccessTokenRefusals: the MCP edge refuses tokens for another
// resource, expired, tampered with, unsigned or signed otherwise, for an
// agent not granted, for a disabled agent, and anywhere but /{agent}/mcp.
func TestAccessTokenRefusals(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	tok := f.mustTokens(t, c, f.agentURL("shop"), "shop").AccessToken
	claims := mustClaims(t, tok)
	key := mustSigningKey(t, f)
	forge := func(method jwt.SigningMethod, secret any, change func(jwt.MapClaims)) string {
		m := jwt.MapClaims{}
		for k, v := range claims {
			m[k] = v
		}
		change(m)
		tk := jwt.NewWithClaims(method, m)
		tk.Header["kid"] = key.ID
		s, err := tk.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	parts := strings.Split(tok, ".")
	tests := []struct {
		name, agent, token string
		status             int
	}{
		{"control", "shop", tok, 200},
		{"wrong audience", "notes", tok, 401},
		{"audience of another gateway", "shop", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { m["aud"] = "https://other.example/shop/mcp" }), 401},
		{"another issuer", "shop", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { m["iss"] = "https://other.example" }), 401},
		{"tampered payload", "shop", parts[0] + "." + mustReencode(t, parts[1], `"shop"`, `"notes"`) + "." + parts[2], 401},
		{"tampered signature", "shop", parts[0] + "." + parts[1] + "." + flip(parts[2]), 401},
		{"alg none", "shop", forge(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, func(jwt.MapClaims) {}), 401},
		{"HS512", "shop", forge(jwt.SigningMethodHS512, key.Secret, func(jwt.MapClaims) {}), 401},
		{"other key", "shop", forge(jwt.SigningMethodHS256, []byte("not the gateway's key, 32 bytes!"), func(jwt.MapClaims) {}), 401},
		{"no expiry", "shop", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { delete(m, "exp") }), 401},
		{"agent not granted", "notes", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { m["aud"] = f.agentURL("notes") }), 403},
		{"no mcp scope", "shop", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { m["scope"] = "other" }), 403},
		{"unknown family", "shop", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { m["fid"] = "fam_missing" }), 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.callMCP(t, tt.agent, tt.token)
			mustStatus(t, tt.name, status, body, tt.status)
		})
	}
	t.Run("other path", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, f.base+"/shop/mcp/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		r := req.Clone(context.Background())
		r.Header.Set("Authorization", "Bearer "+tok)
		r.URL.Path = "/api/v1/agents"
		if _, err := f.authn.Authenticate(r); mcpgate.ErrorCode(err) != mcpgate.EUNAUTHORIZED {
			t.Errorf("token at /api/v1/agents: %v, want unauthorized", err)
		}
	})
	t.Run("disabled agent", func(t *testing.T) {
		ctx := context.Background()
		a, err := f.store.FindAgent(ctx, "shop")
		if err != nil {
			t.Fatal(err)
		}
		a.MCPEnabled = false
		if err := f.store.UpdateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		status, body := f.callMCP(t, "shop", tok)
		mustStatus(t, "disabled agent", status, body, http.StatusUnauthorized)
	})
	t.Run("expired", func(t *testing.T) {
		f.clock.Add(time.Hour + time.Minute)
		status, body := f.callMCP(t, "notes", forge(jwt.SigningMethodHS256, key.Secret, func(m jwt.MapClaims) { m["aud"] = f.agentURL("notes") }))
		mustStatus(t, "expired", status, body, http.StatusUnauthorized)
		if !strings.Contains(body, "expired") {
			t.Errorf("body = %q, want it to say the token expired", body)
		}
	})
}

// TestCSRF refuses the consent and login forms without the right token.
func TestCSRF(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	b := f.newBrowser(t)
	login := b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("shop")).Encode())
	noToken := login.hidden()
	noToken.Del("csrf")
	noToken.Set("username", "alice")
	noToken.Set("password", alicePassword)
	b.post(t, f.base+"/oauth/login", noToken).mustBe(t, http.StatusForbidden, "CSRF")

	next := f.login(t, b, login, "alice", alicePassword)
	consent := b.get(t, f.base+next.location)
	for name, token := range map[string]string{"missing": "", "wrong": "AAAA" + consent.hidden().Get("csrf")[4:]} {
		t.Run(name, func(t *testing.T) {
			form := consent.hidden()
			form.Set("csrf", token)
			form.Set("decision", "allow")
			form.Set("agent", "shop")
			b.post(t, f.base+"/oauth/authorize", form).mustBe(t, http.StatusForbidden, "CSRF")
		})
	}
	t.Run("another browser's token", func(t *testing.T) {
		form := consent.hidden()
		form.Set("decision", "allow")
		form.Set("agent", "shop")
		f.newBrowser(t).post(t, f.base+"/oauth/authorize", form).mustBe(t, http.StatusForbidden, "CSRF")
	})
}

// TestLogin refuses wrong passwords and unknown users alike, and limits
// attempts per user name.
func TestLogin(t *testing.T) {
	f := mustFixture(t, func(o *oauth.Options) { o.LoginLimit = oauth.Limit{Burst: 3, Every: time.Hour} })
	c := f.mustRegister(t, "none")
	b := f.newBrowser(t)
	login := b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("shop")).Encode())
	f.login(t, b, login, "alice", "wrong password").mustBe(t, http.StatusUnauthorized, "Wrong user name or password.")
	f.login(t, b, login, "nobody", alicePassword).mustBe(t, http.StatusUnauthorized, "Wrong user name or password.")
	f.login(t, b, login, "alice", "wrong again").mustBe(t, http.StatusUnauthorized, "Wrong user name or password.")
	f.login(t, b, login, "alice", alicePassword).mustBe(t, http.StatusTooManyRequests, "Too many sign-in attempts")
	if got := b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("shop")).Encode()); !strings.Contains(got.body, `name="password"`) {
		t.Errorf("after failed logins the user is signed in:\n%s", got.body)
	}
}

// TestSessionExpires shows the login page again once the session ended.
func TestSessionExpires(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	b := f.newBrowser(t)
	u := f.base + "/oauth/authorize?" + f.authParams(c, newPKCE(), f.agentURL("shop")).Encode()
	f.login(t, b, b.get(t, u), "alice", alicePassword)
	b.get(t, u).mustBe(t, http.StatusOK, ">Allow<")
	f.clock.Add(13 * time.Hour)
	b.get(t, u).mustBe(t, http.StatusOK, `name="password"`)
}

// mustSigningKey returns the newest signing key.
func mustSigningKey(tb testing.TB, f *fixture) *mcpgate.OAuthSigningKey {
	tb.Helper()
	keys, err := f.store.ListOAuthSigningKeys(context.Background())
	if err != nil || len(keys) == 0 {
		tb.Fatalf("signing keys: %v %v", keys, err)
	}
	return keys[0]
}

// mustReencode replaces text in a base64url JSON segment.
func mustReencode(tb testing.TB, segment, old, new string) string {
	tb.Helper()
	b, err := jwt.NewParser().DecodeSegment(segment)
	if err != nil {
		tb.Fatal(err)
	}
	s := strings.Replace(string(b), old, new, 1)
	if s == string(b) {
		tb.Fatalf("%q not in %s", old, b)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// flip changes a signature's first character.
func flip(sig string) string {
	if sig[0] == 'A' {
		return "B" + sig[1:]
	}
	return "A" + sig[1:]
}
