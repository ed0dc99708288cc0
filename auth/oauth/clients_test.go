package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauth"
)

// TestMetadata serves the authorization server metadata at every discovery
// path and the protected resource metadata of the base and an agent.
func TestMetadata(t *testing.T) {
	f := mustFixture(t, nil)
	for _, path := range []string{
		"/.well-known/oauth-authorization-server",
		"/.well-known/oauth-authorization-server/shop/mcp",
		"/.well-known/openid-configuration",
		"/.well-known/openid-configuration/shop/mcp",
		"/shop/mcp/.well-known/openid-configuration",
		"/shop/mcp/.well-known/oauth-authorization-server",
	} {
		t.Run(path, func(t *testing.T) {
			status, body := f.get(t, path)
			mustStatus(t, path, status, body, http.StatusOK)
			var m map[string]any
			mustJSON(t, body, &m)
			want := map[string]any{
				"issuer": f.base, "authorization_endpoint": f.base + "/oauth/authorize", "token_endpoint": f.base + "/oauth/token",
				"registration_endpoint": f.base + "/oauth/register", "revocation_endpoint": f.base + "/oauth/revoke",
				"client_id_metadata_document_supported": true, "authorization_response_iss_parameter_supported": true,
			}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("%s = %v, want %v", k, m[k], v)
				}
			}
			if fmt.Sprint(m["code_challenge_methods_supported"]) != "[S256]" || fmt.Sprint(m["grant_types_supported"]) != "[authorization_code refresh_token]" ||
				fmt.Sprint(m["token_endpoint_auth_methods_supported"]) != "[none client_secret_basic client_secret_post]" || fmt.Sprint(m["scopes_supported"]) != "[mcp]" {
				t.Errorf("metadata = %v", m)
			}
		})
	}
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource":          f.base,
		"/.well-known/oauth-protected-resource/shop/mcp": f.agentURL("shop"),
	} {
		t.Run(path, func(t *testing.T) {
			status, body := f.get(t, path)
			mustStatus(t, path, status, body, http.StatusOK)
			var m struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				Scopes               []string `json:"scopes_supported"`
				Bearer               []string `json:"bearer_methods_supported"`
			}
			mustJSON(t, body, &m)
			if m.Resource != resource || fmt.Sprint(m.AuthorizationServers) != "["+f.base+"]" || fmt.Sprint(m.Scopes) != "[mcp]" || fmt.Sprint(m.Bearer) != "[header]" {
				t.Errorf("metadata = %+v, want resource %s", m, resource)
			}
		})
	}
}

// TestRegister registers public and confidential clients and refuses bad
// metadata with RFC 7591 errors.
func TestRegister(t *testing.T) {
	f := mustFixture(t, nil)
	tests := []struct {
		name     string
		metadata any
		status   int
		err      string
		method   string
	}{
		{"public", map[string]any{"redirect_uris": []string{"http://localhost:6274/oauth/callback"}, "token_endpoint_auth_method": "none"}, 201, "", "none"},
		{"https redirect", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "client_secret_post"}, 201, "", "client_secret_post"},
		{"default method", map[string]any{"redirect_uris": []string{"http://[::1]:8000/cb"}}, 201, "", "client_secret_basic"},
		{"http elsewhere", map[string]any{"redirect_uris": []string{"http://app.example/cb"}}, 400, "invalid_redirect_uri", ""},
		{"fragment", map[string]any{"redirect_uris": []string{"https://app.example/cb#x"}}, 400, "invalid_redirect_uri", ""},
		{"custom scheme", map[string]any{"redirect_uris": []string{"myapp://cb"}}, 400, "invalid_redirect_uri", ""},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, 400, "invalid_redirect_uri", ""},
		{"no redirect URIs", map[string]any{"client_name": "x"}, 400, "invalid_redirect_uri", ""},
		{"private_key_jwt", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "private_key_jwt"}, 400, "invalid_client_metadata", ""},
		{"implicit grant", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "grant_types": []string{"implicit"}}, 400, "invalid_client_metadata", ""},
		{"token response", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "response_types": []string{"token"}}, 400, "invalid_client_metadata", ""},
		{"bad client_uri", map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "client_uri": "javascript:alert(1)"}, 400, "invalid_client_metadata", ""},
		{"not an object", []string{"x"}, 400, "invalid_client_metadata", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.register(t, tt.metadata)
			mustStatus(t, "register", status, body, tt.status)
			var resp map[string]any
			mustJSON(t, body, &resp)
			if tt.err != "" {
				if resp["error"] != tt.err || resp["error_description"] == "" {
					t.Errorf("response = %v, want error %s with a description", resp, tt.err)
				}
				return
			}
			_, hasSecret := resp["client_secret"]
			if resp["token_endpoint_auth_method"] != tt.method || resp["client_id"] == "" || hasSecret != (tt.method != "none") {
				t.Errorf("response = %v, want method %s and a secret only for confidential clients", resp, tt.method)
			}
		})
	}
	t.Run("wrong content type", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, f.base+"/oauth/register", strings.NewReader(`{"redirect_uris":["https://a.example/cb"]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "text/plain")
		status, body := do(t, f.http.Client(), req)
		mustStatus(t, "register", status, body, http.StatusBadRequest)
	})
}

// TestRegisterRateLimited refuses registrations past the limit.
func TestRegisterRateLimited(t *testing.T) {
	f := mustFixture(t, func(o *oauth.Options) { o.RegisterLimit = oauth.Limit{Burst: 2, Every: time.Hour} })
	meta := map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "none"}
	for i, want := range []int{201, 201, 429} {
		status, body := f.register(t, meta)
		mustStatus(t, fmt.Sprint("registration ", i), status, body, want)
	}
	f.clock.Add(time.Hour)
	status, body := f.register(t, meta)
	mustStatus(t, "registration an hour later", status, body, http.StatusCreated)
}

// TestClientMetadataDocument authorizes a client whose client_id is the
// URL of its metadata document, and refuses unusable documents.
func TestClientMetadataDocument(t *testing.T) {
	f := mustFixture(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	docURL := f.base + "/docs/clients/app.json"
	f.setDoc("app.json", fmt.Sprintf(`{"client_id": %q, "client_name": "Doc app", "redirect_uris": [%q], "token_endpoint_auth_method": "none"}`, docURL, redirect))
	c := &client{ID: docURL, RedirectURI: redirect}
	tok := f.mustTokens(t, c, f.agentURL("shop"), "shop")
	status, body := f.callMCP(t, "shop", tok.AccessToken)
	mustStatus(t, "call with a document client's token", status, body, http.StatusOK)

	big := fmt.Sprintf(`{"client_id": %q, "redirect_uris": [%q], "client_name": %q}`, f.base+"/docs/clients/big.json", redirect, strings.Repeat("x", 20<<10))
	tests := []struct {
		name, doc, redirect, text string
	}{
		{"client_id differs", `{"client_id": "https://elsewhere.example/app.json", "redirect_uris": ["` + redirect + `"]}`, redirect, "differs from the document"},
		{"redirect not in document", "", "http://127.0.0.1:9/other", "is not one the client registered"},
		{"secret in document", `{"client_id": "%s", "client_secret": "s", "redirect_uris": ["` + redirect + `"]}`, redirect, "must not hold a client_secret"},
		{"bad redirect in document", `{"client_id": "%s", "redirect_uris": ["http://app.example/cb"]}`, "http://app.example/cb", "must use https"},
		{"not JSON", `not json`, redirect, "not JSON"},
		{"too large", big, redirect, "larger than"},
		{"missing", "-", redirect, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.ReplaceAll(tt.name, " ", "-") + ".json"
			u := f.base + "/docs/clients/" + name
			switch {
			case tt.doc == "":
				u = docURL
			case tt.name == "too large":
				u = f.base + "/docs/clients/big.json"
				f.setDoc("big.json", tt.doc)
			case tt.doc != "-":
				doc := tt.doc
				if strings.Contains(doc, "%s") {
					doc = fmt.Sprintf(doc, u)
				}
				f.setDoc(name, doc)
			}
			q := f.authParams(&client{ID: u, RedirectURI: tt.redirect}, newPKCE(), f.agentURL("shop"))
			f.newBrowser(t).get(t, f.base+"/oauth/authorize?"+q.Encode()).mustBe(t, http.StatusBadRequest, tt.text)
		})
	}
}

// TestClientMetadataDocumentGuarded refuses documents on private addresses
// with the default, strict client.
func TestClientMetadataDocumentGuarded(t *testing.T) {
	f := mustFixture(t, func(o *oauth.Options) { o.HTTPClient = nil })
	u := f.setDoc("app.json", `{}`)
	q := f.authParams(&client{ID: u, RedirectURI: "http://127.0.0.1:9/callback"}, newPKCE(), f.agentURL("shop"))
	f.newBrowser(t).get(t, f.base+"/oauth/authorize?"+q.Encode()).mustBe(t, http.StatusBadRequest, "unknown client")
}

// TestRevoke revokes refresh and access tokens (RFC 7009), with their
// family.
func TestRevoke(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	other := f.mustRegister(t, "none")
	for _, kind := range []string{"refresh", "access"} {
		t.Run(kind, func(t *testing.T) {
			tok := f.mustTokens(t, c, f.agentURL("shop"), "shop")
			token := tok.RefreshToken
			if kind == "access" {
				token = tok.AccessToken
			}
			mustStatus(t, "revoke by another client", f.revoke(t, other, token), "", http.StatusBadRequest)
			status, body := f.callMCP(t, "shop", tok.AccessToken)
			mustStatus(t, "still valid", status, body, http.StatusOK)
			mustStatus(t, "revoke", f.revoke(t, c, token), "", http.StatusOK)
			status, body = f.callMCP(t, "shop", tok.AccessToken)
			mustStatus(t, "revoked access token", status, body, http.StatusUnauthorized)
			f.refresh(t, c, tok.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")
		})
	}
	mustStatus(t, "unknown token", f.revoke(t, c, "no-such-token"), "", http.StatusOK)
	mustStatus(t, "unknown client", f.revoke(t, &client{ID: "cl_missing"}, "x"), "", http.StatusUnauthorized)
}

// TestGrantRevocation: revoking a grant in the store (as another replica
// would) stops its tokens once the revocation cache's TTL has passed.
func TestGrantRevocation(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	tok := f.mustTokens(t, c, f.agentURL("shop"), "shop")
	status, body := f.callMCP(t, "shop", tok.AccessToken)
	mustStatus(t, "before", status, body, http.StatusOK)
	gid := mustClaims(t, tok.AccessToken)["gid"].(string)
	if err := f.store.RevokeOAuthGrant(context.Background(), gid, time.Now()); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(2*time.Second + time.Millisecond)
	status, body = f.callMCP(t, "shop", tok.AccessToken)
	mustStatus(t, "after the revocation TTL", status, body, http.StatusUnauthorized)
	f.refresh(t, c, tok.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")
}

// TestSigningKeyRotation keeps tokens signed with the old key valid and
// signs new ones with the new key.
func TestSigningKeyRotation(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	before := f.mustTokens(t, c, f.agentURL("shop"), "shop")
	if err := f.oauth.RotateSigningKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := f.refresh(t, c, before.RefreshToken)
	if after.status != http.StatusOK {
		t.Fatalf("refresh: %+v", after)
	}
	if kid := mustHeader(t, after.AccessToken)["kid"]; kid != mustSigningKey(t, f).ID {
		t.Errorf("new token's kid = %v, want the new key", kid)
	}
	for name, tok := range map[string]string{"old key": before.AccessToken, "new key": after.AccessToken} {
		status, body := f.callMCP(t, "shop", tok)
		mustStatus(t, name, status, body, http.StatusOK)
	}
}

// get fetches a path of the server.
func (f *fixture) get(tb testing.TB, path string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return do(tb, f.http.Client(), req)
}

// revoke posts to the revocation endpoint and returns the status.
func (f *fixture) revoke(tb testing.TB, c *client, token string) int {
	tb.Helper()
	form := url.Values{"token": {token}, "client_id": {c.ID}}
	req, err := http.NewRequest(http.MethodPost, f.base+"/oauth/revoke", strings.NewReader(form.Encode()))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, _ := do(tb, f.http.Client(), req)
	return status
}
