package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcpgate/mcpgate/e2e/headless"
)

// oauthPassword is the demo user's password in the OAuth tests.
const oauthPassword = "correct horse battery staple"

// oauthPlan tells oauth.mjs what to do.
type oauthPlan struct {
	URL         string       `json:"url"`
	Resource    string       `json:"resource,omitempty"`
	Calls       []clientCall `json:"calls,omitempty"`
	Reauthorize bool         `json:"reauthorize,omitempty"`
	TimeoutMs   int          `json:"timeoutMs,omitempty"`
}

// oauthTokens is a token response as the SDK saved it.
type oauthTokens struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// oauthReport is what oauth.mjs prints last.
type oauthReport struct {
	Unauthorized   string          `json:"unauthorized"`
	Authorizations []authorization `json:"authorizations"`
	Issuer         string          `json:"issuer"`
	Client         struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	} `json:"client"`
	Tokens   []oauthTokens  `json:"tokens"`
	Sessions []oauthSession `json:"sessions"`
	Refresh  string         `json:"refresh"`
	Error    *clientError   `json:"error"`
}

// authorization is one trip of oauth.mjs to the authorize URL.
type authorization struct {
	URL       string            `json:"url"`
	StateSent string            `json:"stateSent"`
	Callback  map[string]string `json:"callback"`
}

// oauthSession is one connection of oauth.mjs with a token.
type oauthSession struct {
	Tools []string `json:"tools"`
	Calls []struct {
		Name   string       `json:"name"`
		Result *toolResult  `json:"result"`
		Error  *clientError `json:"error"`
	} `json:"calls"`
}

// oauthGateway is a gateway serving the demo agent, whose owner "demo" has
// a password, and a second agent "other" of the same user.
type oauthGateway struct {
	*gateway
	Key string // the demo user's API key
}

// TestOAuth adds the demo agent to the official TypeScript SDK client by
// URL alone: the client discovers the gateway's authorization server,
// registers, and sends the user to the authorize URL, where headless
// Chromium signs in on the gateway's login page and allows on its consent
// page; the client then exchanges the code, lists and calls tools, and
// refreshes. Over plain HTTP the test then refreshes again, revokes, and
// checks that the gateway refuses what it must. A second run denies; a
// third asks for the whole gateway, ticks one agent of two, and then
// authorizes again, which the gateway answers without a page.
func TestOAuth(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	chromium := chromiumPath(t)
	start := time.Now()
	g := startOAuthGateway(t)
	t.Logf("gateway ready in %v", time.Since(start).Round(time.Millisecond))
	agentURL := g.URL + "/demo/mcp"

	var rep *oauthReport
	t.Run("allow", func(t *testing.T) {
		begin := time.Now()
		rep = runOAuth(t, oauthPlan{URL: agentURL, Calls: oauthCalls()}, func(u string) {
			inBrowser(t, chromium, func(ctx context.Context) { consent(t, ctx, u, onlyDemo(), nil, "Allow") })
		})
		t.Logf("discovery, registration, login, consent, token, 2 sessions and a refresh took %v", time.Since(begin).Round(time.Millisecond))
		checkAllowed(t, g, rep)
	})
	if rep == nil || len(rep.Tokens) < 2 {
		t.Fatal("no tokens to go on with")
	}
	meta := discoverAS(t, g)
	t.Run("refused without a token", func(t *testing.T) { checkNoToken(t, g) })
	t.Run("refused for another agent's URL", func(t *testing.T) {
		code, hdr, body := mcpPost(t, g.URL+"/other/mcp", rep.Tokens[1].AccessToken)
		if code != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("token for /demo/mcp at /other/mcp: %d, WWW-Authenticate %q, want 401 (audience): %s", code, hdr.Get("WWW-Authenticate"), body)
		}
	})
	t.Run("refused when tampered", func(t *testing.T) { checkTampered(t, agentURL, rep.Tokens[1].AccessToken) })
	latest := rep.Tokens[1]
	t.Run("refresh", func(t *testing.T) { latest = checkRefresh(t, meta, rep, agentURL, latest) })
	t.Run("revoke", func(t *testing.T) { checkRevoke(t, meta, rep, agentURL, latest) })
	t.Run("deny", func(t *testing.T) { checkDeny(t, chromium, agentURL) })
	t.Run("gateway-wide grant", func(t *testing.T) { checkGatewayWide(t, g, chromium) })
	t.Logf("TestOAuth took %v", time.Since(start).Round(time.Millisecond))
}

// oauthCalls are the tool calls the client makes with each token.
func oauthCalls() []clientCall {
	return []clientCall{{Name: "convert_units", Arguments: map[string]any{"value": 10, "from": "km", "to": "m"}}}
}

// onlyDemo is the state of the consent page's agent checkboxes that
// grants the agent demo and not the agent other.
func onlyDemo() map[string]bool { return map[string]bool{"demo": true, "other": false} }

// checkGatewayWide asks for the gateway's base URL as the resource, which
// offers every agent with none ticked; the user ticks demo only. The token
// works at /demo/mcp and, for lack of the grant, not at /other/mcp (403,
// insufficient_scope). The client then authorizes again in the same
// browser, still signed in, and the gateway sends it straight back: no
// sign-in, and no consent page for what was granted before.
func checkGatewayWide(t *testing.T, g *oauthGateway, chromium string) {
	ctx, cancel := browser(t, chromium)
	defer cancel()
	plan := oauthPlan{URL: g.URL + "/demo/mcp", Resource: g.URL, Calls: oauthCalls(), Reauthorize: true}
	rep := runOAuth(t, plan, func(u string) {
		consent(t, ctx, u, map[string]bool{"demo": false, "other": false}, onlyDemo(), "Allow")
	}, func(u string) {
		browse(t, ctx, "authorize again", chromedp.Navigate(u), chromedp.WaitVisible(chromedp.ID("done")))
	})
	if len(rep.Sessions) != 3 || len(rep.Tokens) != 3 {
		t.Fatalf("sessions %d and token responses %d, want 3 and 3", len(rep.Sessions), len(rep.Tokens))
	}
	for i, a := range rep.Authorizations {
		if a.Callback["code"] == "" || a.Callback["state"] != a.StateSent {
			t.Errorf("authorization %d: callback %v, sent state %q", i, a.Callback, a.StateSent)
		}
	}
	for i, s := range rep.Sessions {
		checkSession(t, i, s)
	}
	checkClaims(t, rep.Tokens[1].AccessToken, g.URL)
	code, hdr, body := mcpPost(t, g.URL+"/other/mcp", rep.Tokens[1].AccessToken)
	if code != http.StatusForbidden || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Errorf("gateway-wide token without other at /other/mcp: %d, WWW-Authenticate %q, want 403 insufficient_scope: %s", code, hdr.Get("WWW-Authenticate"), body)
	}
}

// chromiumPath returns the Chromium to run, skipping t without one.
func chromiumPath(t *testing.T) string {
	t.Helper()
	return headless.Chromium(t)
}

// startOAuthGateway gives the demo user a password before the demo
// takes the user over, starts the demo, and adds the agent "other".
func startOAuthGateway(t *testing.T) *oauthGateway {
	t.Helper()
	dataDir := t.TempDir()
	runCLI(t, nil, "init", "--data-dir", dataDir) // admin commands refuse a data dir with no database
	runCLI(t, []string{"MCPGATE_E2E_PASSWORD=" + oauthPassword},
		"user", "create", "demo", "--password-env", "MCPGATE_E2E_PASSWORD", "--data-dir", dataDir)
	g := &oauthGateway{gateway: startGateway(t, nil, "--demo", "--data-dir", dataDir)}
	g.Key = mustMatch(t, keyLine, waitFor(t, g.stdout.String, "Claude Desktop"))
	body := `{"id":"other","name":"Other agent","mcp_enabled":true}`
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/v1/agents", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.Key)
	req.Header.Set("Content-Type", "application/json")
	if code, b := do(t, req); code != http.StatusCreated {
		t.Fatalf("create agent other: %d %s", code, b)
	}
	return g
}

// runOAuth runs oauth.mjs with plan, hands each authorize URL it prints to
// the next of browse, and returns its report.
func runOAuth(t *testing.T, plan oauthPlan, browse ...func(authorizeURL string)) *oauthReport {
	t.Helper()
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "oauth.mjs", string(b))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]json.RawMessage, 8)
	go readLines(out, lines)
	t.Cleanup(func() { // after a failure: end the script
		if cmd.ProcessState == nil {
			cancel()
			for range lines {
			}
			cmd.Wait()
		}
	})
	rep := driveOAuth(t, lines, browse)
	if len(rep.Authorizations) != len(browse) {
		t.Errorf("the client went to the authorize URL %d times, want %d", len(rep.Authorizations), len(browse))
	}
	for range lines { // the script ends after its report
	}
	if err := cmd.Wait(); err != nil && rep.Error == nil {
		t.Errorf("oauth.mjs: %v\n%s", err, stderr.String())
	}
	if rep.Error != nil {
		t.Fatalf("oauth.mjs failed at %s: %s (code %v)\nstderr: %s", rep.Error.Stage, rep.Error.Message, rep.Error.Code, stderr.String())
	}
	return rep
}

// readLines sends each JSON line of r, and closes lines at its end.
func readLines(r io.Reader, lines chan<- map[string]json.RawMessage) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			lines <- m
		}
	}
}

// driveOAuth browses to each authorize URL the script prints and returns
// its report; one more than browse has funcs for is a failure.
func driveOAuth(t *testing.T, lines <-chan map[string]json.RawMessage, browse []func(string)) *oauthReport {
	t.Helper()
	authorized := 0
	for m := range lines {
		if u, ok := m["authorize"]; ok {
			var s string
			json.Unmarshal(u, &s)
			if authorized++; authorized > len(browse) {
				t.Errorf("the client asked for authorization again: %s", s)
				continue
			}
			browse[authorized-1](s)
		}
		if r, ok := m["report"]; ok {
			var rep oauthReport
			if err := json.Unmarshal(r, &rep); err != nil {
				t.Fatalf("oauth.mjs report: %v: %s", err, r)
			}
			return &rep
		}
	}
	t.Fatal("oauth.mjs ended without a report")
	return nil
}

// checkAllowed checks what the client saw on the way to its tools.
func checkAllowed(t *testing.T, g *oauthGateway, rep *oauthReport) {
	t.Helper()
	a := rep.Authorizations[0]
	au, err := url.Parse(a.URL)
	if err != nil {
		t.Fatalf("authorize URL %q: %v", a.URL, err)
	}
	q := au.Query()
	for k, want := range map[string]string{"resource": g.URL + "/demo/mcp", "code_challenge_method": "S256", "response_type": "code", "client_id": rep.Client.ClientID} {
		if q.Get(k) != want {
			t.Errorf("authorize URL %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if a.Callback["state"] != a.StateSent || a.StateSent == "" {
		t.Errorf("callback state %q, sent %q", a.Callback["state"], a.StateSent)
	}
	if rep.Issuer != g.URL || a.Callback["iss"] != rep.Issuer {
		t.Errorf("issuer %q, callback iss %q, want both %q (RFC 9207)", rep.Issuer, a.Callback["iss"], g.URL)
	}
	if rep.Refresh != "AUTHORIZED" || len(rep.Tokens) != 2 {
		t.Fatalf("refresh = %q with %d token responses, want AUTHORIZED after 2", rep.Refresh, len(rep.Tokens))
	}
	first, second := rep.Tokens[0], rep.Tokens[1]
	if first.AccessToken == second.AccessToken || first.RefreshToken == second.RefreshToken || second.RefreshToken == "" {
		t.Errorf("the refresh did not rotate both tokens: %+v then %+v", first, second)
	}
	if !strings.EqualFold(first.TokenType, "bearer") || first.ExpiresIn <= 0 {
		t.Errorf("token response %+v: want a bearer token with expires_in", first)
	}
	checkClaims(t, first.AccessToken, g.URL+"/demo/mcp")
	if len(rep.Sessions) != 2 {
		t.Fatalf("sessions = %d, want 2 (before and after the refresh)", len(rep.Sessions))
	}
	for i, s := range rep.Sessions {
		checkSession(t, i, s)
	}
}

// checkSession checks one connection's tools and its call's exact result.
func checkSession(t *testing.T, i int, s oauthSession) {
	t.Helper()
	tools, calls := s.Tools, s.Calls
	if len(tools) != 8 { // 8 since the demo's gated delete_invoice, which shows the approval gate
		t.Errorf("session %d: tools %v, want the demo's 8", i, tools)
	}
	if len(calls) != 1 || calls[0].Result == nil || calls[0].Result.IsError {
		t.Fatalf("session %d: calls %+v", i, calls)
	}
	sc := calls[0].Result.StructuredContent
	if sc["result"] != 10000.0 || sc["category"] != "length" {
		t.Errorf("session %d: 10 km in m = %v, want 10000 (length)", i, sc)
	}
}

// checkClaims checks an access token's audience (readable without the key).
func checkClaims(t *testing.T, token, aud string) {
	t.Helper()
	var claims map[string]any
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("access token is not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(b, &claims) != nil {
		t.Fatalf("access token payload %q: %v", parts[1], err)
	}
	if got := fmt.Sprint(claims["aud"]); got != aud && got != "["+aud+"]" {
		t.Errorf("aud = %v, want %s", claims["aud"], aud)
	}
}

// asMetadata is the part of the authorization server metadata the test uses.
type asMetadata struct {
	Issuer             string `json:"issuer"`
	TokenEndpoint      string `json:"token_endpoint"`
	RevocationEndpoint string `json:"revocation_endpoint"`
}

// discoverAS reads the authorization server metadata (RFC 8414).
func discoverAS(t *testing.T, g *oauthGateway) *asMetadata {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/.well-known/oauth-authorization-server", nil)
	code, b := do(t, req)
	var m asMetadata
	if code != http.StatusOK || json.Unmarshal(b, &m) != nil || m.TokenEndpoint == "" || m.RevocationEndpoint == "" {
		t.Fatalf("authorization server metadata: %d %s", code, b)
	}
	return &m
}

// checkNoToken checks the 401 that starts discovery, and the document it
// points to.
func checkNoToken(t *testing.T, g *oauthGateway) {
	code, hdr, body := mcpPost(t, g.URL+"/demo/mcp", "")
	want := fmt.Sprintf(`resource_metadata="%s/.well-known/oauth-protected-resource/demo/mcp"`, g.URL)
	if code != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), want) {
		t.Fatalf("no token: %d, WWW-Authenticate %q, want 401 with %s: %s", code, hdr.Get("WWW-Authenticate"), want, body)
	}
	req, _ := http.NewRequest(http.MethodGet, g.URL+"/.well-known/oauth-protected-resource/demo/mcp", nil)
	code, b := do(t, req)
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &prm) != nil {
		t.Fatalf("protected resource metadata: %d %s", code, b)
	}
	if prm.Resource != g.URL+"/demo/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != g.URL {
		t.Errorf("protected resource metadata = %+v", prm)
	}
}

// checkTampered checks that a token with a changed payload or signature
// is refused.
func checkTampered(t *testing.T, agentURL, token string) {
	parts := strings.Split(token, ".")
	var claims map[string]any
	if b, err := base64.RawURLEncoding.DecodeString(parts[1]); len(parts) != 3 || err != nil || json.Unmarshal(b, &claims) != nil {
		t.Fatalf("access token is not a JWT: %q", token)
	}
	claims["agents"] = []string{"demo", "other"}
	claims["exp"] = time.Now().Add(24 * time.Hour).Unix()
	nb, _ := json.Marshal(claims)
	sig := []byte(parts[2])
	sig[len(sig)/2] ^= 1 // still base64url: a letter or digit flips its lowest bit
	for name, bad := range map[string]string{
		"payload":   parts[0] + "." + base64.RawURLEncoding.EncodeToString(nb) + "." + parts[2],
		"signature": parts[0] + "." + parts[1] + "." + string(sig),
		"alg none":  base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".",
	} {
		t.Run(name, func(t *testing.T) {
			if code, body := mcpInitialize(t, agentURL, bad); code != http.StatusUnauthorized {
				t.Errorf("tampered token (%s): status %d, want 401: %s", name, code, body)
			}
		})
	}
}

// checkRefresh uses the refresh_token grant over plain HTTP, checks that
// the new access token works and the one it replaced still does (it lives
// until it expires), and returns the new tokens.
func checkRefresh(t *testing.T, meta *asMetadata, rep *oauthReport, agentURL string, cur oauthTokens) oauthTokens {
	code, b := tokenRequest(t, meta.TokenEndpoint, url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken},
		"client_id": {rep.Client.ClientID}, "resource": {agentURL},
	})
	var next oauthTokens
	if code != http.StatusOK || json.Unmarshal(b, &next) != nil || next.AccessToken == "" {
		t.Fatalf("refresh: %d %s", code, b)
	}
	if next.RefreshToken == "" || next.RefreshToken == cur.RefreshToken {
		t.Errorf("refresh token not rotated: %q", next.RefreshToken)
	}
	if code, body := mcpInitialize(t, agentURL, next.AccessToken); code != http.StatusOK {
		t.Errorf("refreshed access token: %d %s", code, body)
	}
	return next
}

// checkRevoke revokes the refresh token (RFC 7009) and checks that the
// grant's access token stops working within a short bound and the refresh
// token is refused.
func checkRevoke(t *testing.T, meta *asMetadata, rep *oauthReport, agentURL string, cur oauthTokens) {
	code, b := tokenRequest(t, meta.RevocationEndpoint, url.Values{
		"token": {cur.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {rep.Client.ClientID},
	})
	if code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, b)
	}
	revoked := time.Now()
	eventuallyWithin(t, 30*time.Second, func() bool {
		code, _ := mcpInitialize(t, agentURL, cur.AccessToken)
		return code == http.StatusUnauthorized // the access token of a revoked grant
	})
	t.Logf("the revoked grant's access token was refused %v after the revocation", time.Since(revoked).Round(time.Millisecond))
	code, b = tokenRequest(t, meta.TokenEndpoint, url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken}, "client_id": {rep.Client.ClientID},
	})
	if code != http.StatusBadRequest || !bytes.Contains(b, []byte(`"invalid_grant"`)) {
		t.Errorf("refresh with a revoked token: %d %s, want 400 invalid_grant", code, b)
	}
}

// checkDeny runs the flow again and presses Deny: the client's callback
// gets access_denied with its state.
func checkDeny(t *testing.T, chromium, agentURL string) {
	rep := runOAuth(t, oauthPlan{URL: agentURL}, func(u string) {
		inBrowser(t, chromium, func(ctx context.Context) { consent(t, ctx, u, onlyDemo(), nil, "Deny") })
	})
	a := rep.Authorizations[0]
	cb := a.Callback
	if cb["error"] != "access_denied" || cb["code"] != "" {
		t.Errorf("deny: callback %v, want error=access_denied and no code", cb)
	}
	if cb["state"] != a.StateSent || a.StateSent == "" {
		t.Errorf("deny: callback state %q, sent %q", cb["state"], a.StateSent)
	}
	if cb["iss"] != rep.Issuer || rep.Issuer == "" {
		t.Errorf("deny: callback iss %q, want the issuer %q (RFC 9207)", cb["iss"], rep.Issuer)
	}
	if len(rep.Tokens) != 0 || len(rep.Sessions) != 0 {
		t.Errorf("deny: the client got tokens %v", rep.Tokens)
	}
}

// mcpInitialize posts an initialize request with token and returns the
// status and body.
func mcpInitialize(t *testing.T, agentURL, token string) (int, string) {
	t.Helper()
	code, _, body := mcpPost(t, agentURL, token)
	return code, body
}

// mcpPost posts an initialize request, with a bearer token unless empty.
func mcpPost(t *testing.T, agentURL, token string) (int, http.Header, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"oauth-e2e","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, agentURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// tokenRequest posts a form to an OAuth endpoint.
func tokenRequest(t *testing.T, endpoint string, form url.Values) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

// do sends req and returns the status and body.
func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// consentBox is a checkbox of the consent page.
type consentBox struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Checked bool   `json:"checked"`
}

// consent opens the authorize URL in a headless Chromium and signs in as
// demo. On the consent page it checks that the client is named and that
// the agent checkboxes start as pre says, clicks those whose state differs
// from tick, and presses the button (Allow or Deny).
func consent(t *testing.T, ctx context.Context, authorizeURL string, pre, tick map[string]bool, button string) {
	t.Helper()
	begin := time.Now()
	browse(t, ctx, "sign in", chromedp.Navigate(authorizeURL),
		chromedp.WaitVisible(chromedp.CSS(`input[name="username"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), "demo"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), oauthPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`input[type="checkbox"]`)))
	checkConsentPage(t, evaluate[string](t, ctx, `document.body.innerText`), agentBoxes(t, ctx), pre)
	for agent, want := range tick {
		if pre[agent] != want {
			browse(t, ctx, "tick "+agent, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[type="checkbox"][value=%q]`, agent))))
		}
	}
	if got := agentBoxes(t, ctx); tick != nil && !maps.Equal(got, tick) {
		t.Fatalf("agent checkboxes after ticking: %v, want %v", got, tick)
	}
	browse(t, ctx, "press "+button,
		chromedp.Click(chromedp.Search(fmt.Sprintf(`//button[normalize-space()=%q]`, button))),
		chromedp.WaitVisible(chromedp.ID("done")))
	t.Logf("browser: login and consent (%s) took %v", button, time.Since(begin).Round(time.Millisecond))
}

// agentBoxes returns the states of the consent page's checkboxes for the
// agents demo and other.
func agentBoxes(t *testing.T, ctx context.Context) map[string]bool {
	t.Helper()
	boxes := evaluate[[]consentBox](t, ctx,
		`Array.from(document.querySelectorAll('input[type="checkbox"]'), e => ({name: e.name, value: e.value, checked: e.checked}))`)
	states := map[string]bool{}
	for _, b := range boxes {
		if b.Value == "demo" || b.Value == "other" {
			states[b.Value] = b.Checked
		}
	}
	return states
}

// checkConsentPage checks that the consent page names the client and its
// redirect URI and offers both of the user's agents, ticked as pre says.
func checkConsentPage(t *testing.T, page string, boxes, pre map[string]bool) {
	t.Helper()
	if !strings.Contains(page, "mcpgate e2e (TypeScript SDK)") || !strings.Contains(page, "http://127.0.0.1:") {
		t.Errorf("consent page does not name the client and its redirect URI:\n%s", page)
	}
	if !maps.Equal(boxes, pre) {
		t.Errorf("consent page agent checkboxes %v, want %v", boxes, pre)
	}
}

// browse runs steps in the browser for at most 20 seconds
// (headless.Browse).
func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	headless.Browse(t, ctx, what, steps...)
}

// evaluate returns the value of a JavaScript expression in the page.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return headless.Evaluate[T](t, ctx, expr)
}

// inBrowser runs f in a fresh headless Chromium.
func inBrowser(t *testing.T, chromium string, f func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := browser(t, chromium)
	defer cancel()
	f(ctx)
}

// browser starts a headless Chromium with its own profile, for at most
// two minutes.
func browser(t *testing.T, chromium string) (context.Context, context.CancelFunc) {
	t.Helper()
	return headless.Start(t, chromium)
}
