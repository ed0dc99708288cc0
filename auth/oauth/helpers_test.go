package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/auth/oauth"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// alicePassword is the password of the fixture's users.
const alicePassword = "correct horse battery staple"

// clock is the fixture's clock: real time moved forward on demand.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// fixture is an authorization server over a real SQLite store, served over
// TLS on 127.0.0.1 with a stand-in for the gateway's MCP edge at
// /{agent}/mcp: authenticate, find the agent, Credential.Authorize.
type fixture struct {
	store *sqlstore.Store
	oauth *oauth.Server
	authn *auth.Authenticator
	http  *httptest.Server
	base  string
	clock *clock
	mux   *http.ServeMux
	// docs are served at /docs/{name}, as client metadata documents.
	docsMu sync.Mutex
	docs   map[string]string
}

// mustFixture builds the fixture: alice owns agents shop and notes
// (MCP-enabled) and off (not); bob owns bobs. opts may adjust the
// server's options.
func mustFixture(tb testing.TB, opts func(*oauth.Options)) *fixture {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	f := &fixture{store: st, clock: &clock{}, mux: http.NewServeMux(), docs: map[string]string{}}
	f.http = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.mux.ServeHTTP(w, r) }))
	f.http.StartTLS()
	tb.Cleanup(f.http.Close)
	f.base = f.http.URL
	guard := netguard.New(&netguard.Options{TLSConfig: f.http.Client().Transport.(*http.Transport).TLSClientConfig})
	o := &oauth.Options{Store: st, PublicURL: f.base, Now: f.clock.Now,
		HTTPClient: guard.Client(netguard.Policy{AllowPrivate: true})}
	if opts != nil {
		opts(o)
	}
	if f.oauth, err = oauth.New(ctx, o); err != nil {
		tb.Fatal(err)
	}
	f.authn = auth.NewAuthenticator(st, &auth.Options{Tokens: f.oauth})
	for pattern, h := range f.oauth.Handlers() {
		f.mux.Handle(pattern, h)
	}
	f.mux.HandleFunc("/{agent}/mcp", f.serveMCP)
	f.mux.HandleFunc("GET /docs/clients/{name}", f.serveDoc)
	f.mustUser(tb, "alice", "shop", "notes")
	f.mustUser(tb, "bob", "bobs")
	f.mustAgent(tb, "alice", "off", false)
	return f
}

// mustUser creates a user with alicePassword and MCP-enabled agents.
func (f *fixture) mustUser(tb testing.TB, name string, agents ...string) {
	tb.Helper()
	hash, err := auth.HashPassword(alicePassword)
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.store.CreateUser(context.Background(), &mcpgate.User{Name: name, PasswordHash: hash, Source: mcpgate.SourceCLI}); err != nil {
		tb.Fatal(err)
	}
	for _, a := range agents {
		f.mustAgent(tb, name, a, true)
	}
}

// mustAgent creates an agent of the named user.
func (f *fixture) mustAgent(tb testing.TB, owner, id string, enabled bool) {
	tb.Helper()
	ctx := context.Background()
	u, err := f.store.FindUserByName(ctx, owner)
	if err != nil {
		tb.Fatal(err)
	}
	a := &mcpgate.Agent{ID: id, Name: "Agent " + id, Description: "Does " + id + ".", OwnerID: u.ID, MCPEnabled: enabled, Source: mcpgate.SourceCLI}
	if err := f.store.CreateAgent(ctx, a); err != nil {
		tb.Fatal(err)
	}
}

// serveMCP answers like the gateway's MCP edge, with the caller's user and
// agents when the credential may use the agent.
func (f *fixture) serveMCP(w http.ResponseWriter, r *http.Request) {
	cred, err := f.authn.Authenticate(r)
	if err == nil {
		var a *mcpgate.Agent
		if a, err = f.store.FindAgent(r.Context(), r.PathValue("agent")); err == nil {
			err = cred.Authorize(a)
		}
	}
	status := map[string]int{"": 200, mcpgate.EUNAUTHORIZED: 401, mcpgate.EFORBIDDEN: 403, mcpgate.ENOTFOUND: 404}[mcpgate.ErrorCode(err)]
	if status == 0 {
		status = 500
	}
	w.WriteHeader(status)
	if err != nil {
		_, _ = io.WriteString(w, mcpgate.ErrorMessage(err))
		return
	}
	_ = json.NewEncoder(w).Encode(cred)
}

// serveDoc serves a client metadata document set with setDoc.
func (f *fixture) serveDoc(w http.ResponseWriter, r *http.Request) {
	f.docsMu.Lock()
	doc, ok := f.docs[r.PathValue("name")]
	f.docsMu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, doc)
}

// setDoc publishes a document and returns its URL.
func (f *fixture) setDoc(name, doc string) string {
	f.docsMu.Lock()
	defer f.docsMu.Unlock()
	f.docs[name] = doc
	return f.base + "/docs/clients/" + name
}

// agentURL returns an agent's MCP URL, the resource of its tokens.
func (f *fixture) agentURL(id string) string { return f.base + "/" + id + "/mcp" }

// callMCP calls an agent's MCP endpoint with a bearer token and returns
// the status and body.
func (f *fixture) callMCP(tb testing.TB, agent, token string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, f.agentURL(agent), nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return do(tb, f.http.Client(), req)
}

// do sends a request and returns the status and body.
func do(tb testing.TB, c *http.Client, req *http.Request) (int, string) {
	tb.Helper()
	resp, body := roundTrip(tb, c, req)
	return resp.StatusCode, body
}

// roundTrip sends a request and returns the response, its body read and
// closed.
func roundTrip(tb testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	tb.Helper()
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(body)
}

// client is a registered client as the tests use it.
type client struct {
	ID, Secret, RedirectURI string
}

// mustRegister registers a client with the given auth method.
func (f *fixture) mustRegister(tb testing.TB, method string) *client {
	tb.Helper()
	redirect := "http://127.0.0.1:9/callback"
	status, body := f.register(tb, map[string]any{"redirect_uris": []string{redirect}, "token_endpoint_auth_method": method, "client_name": "Test client"})
	if status != http.StatusCreated {
		tb.Fatalf("register: %d %s", status, body)
	}
	var resp struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	mustJSON(tb, body, &resp)
	return &client{ID: resp.ClientID, Secret: resp.ClientSecret, RedirectURI: redirect}
}

// register posts a registration request.
func (f *fixture) register(tb testing.TB, metadata any) (int, string) {
	tb.Helper()
	b, err := json.Marshal(metadata)
	if err != nil {
		tb.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, f.base+"/oauth/register", strings.NewReader(string(b)))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(tb, f.http.Client(), req)
}

// pkce is a code verifier and its S256 challenge.
type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	v := strings.Repeat("v", 10) + mcpgate.NewID("") + mcpgate.NewID("")
	sum := sha256.Sum256([]byte(v))
	return pkce{verifier: v, challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// authParams returns the parameters of a valid authorization request.
func (f *fixture) authParams(c *client, p pkce, resource string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.RedirectURI},
		"code_challenge": {p.challenge}, "code_challenge_method": {"S256"},
		"state": {"st-" + p.challenge[:8]}, "resource": {resource}, "scope": {"mcp"},
	}
}

// browser is a user agent with cookies that does not follow redirects.
type browser struct {
	c *http.Client
}

func (f *fixture) newBrowser(tb testing.TB) *browser {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	c := &http.Client{Jar: jar, Transport: f.http.Client().Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{c: c}
}

// page is a response the browser got.
type page struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (b *browser) get(tb testing.TB, u string) *page {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return b.send(tb, req)
}

func (b *browser) post(tb testing.TB, u string, form url.Values) *page {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(tb, req)
}

func (b *browser) send(tb testing.TB, req *http.Request) *page {
	tb.Helper()
	resp, body := roundTrip(tb, b.c, req)
	return &page{status: resp.StatusCode, body: body, location: resp.Header.Get("Location"), header: resp.Header}
}

// hiddenPattern finds a hidden form field.
var hiddenPattern = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)

// hidden returns the page's hidden form fields.
func (p *page) hidden() url.Values {
	v := url.Values{}
	for _, m := range hiddenPattern.FindAllStringSubmatch(p.body, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	return v
}

// mustBe fails unless the page has the status and contains every text.
func (p *page) mustBe(tb testing.TB, status int, texts ...string) {
	tb.Helper()
	if p.status != status {
		tb.Fatalf("status = %d, want %d; body:\n%s", p.status, status, p.body)
	}
	for _, s := range texts {
		if !strings.Contains(p.body, s) {
			tb.Fatalf("page lacks %q:\n%s", s, p.body)
		}
	}
}

// login submits the login page's form.
func (f *fixture) login(tb testing.TB, b *browser, loginPage *page, user, password string) *page {
	tb.Helper()
	form := loginPage.hidden()
	form.Set("username", user)
	form.Set("password", password)
	return b.post(tb, f.base+"/oauth/login", form)
}

// consent submits the consent page's form.
func (f *fixture) consent(tb testing.TB, b *browser, consentPage *page, decision string, agents ...string) *page {
	tb.Helper()
	form := consentPage.hidden()
	form.Set("decision", decision)
	form["agent"] = agents
	return b.post(tb, f.base+"/oauth/authorize", form)
}

// redirected returns the parameters of a redirect to the client.
func redirected(tb testing.TB, p *page, c *client) url.Values {
	tb.Helper()
	if p.status != http.StatusFound && p.status != http.StatusSeeOther {
		tb.Fatalf("status = %d, want a redirect; body:\n%s", p.status, p.body)
	}
	u, err := url.Parse(p.location)
	if err != nil {
		tb.Fatal(err)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != c.RedirectURI {
		tb.Fatalf("redirected to %s, want %s", p.location, c.RedirectURI)
	}
	return u.Query()
}

// mustCode walks a fresh browser through login and, unless the user's
// grant covers the request already, consent of the given agents, and
// returns the authorization code.
func (f *fixture) mustCode(tb testing.TB, c *client, p pkce, resource string, agents ...string) string {
	tb.Helper()
	b := f.newBrowser(tb)
	login := b.get(tb, f.base+"/oauth/authorize?"+f.authParams(c, p, resource).Encode())
	login.mustBe(tb, http.StatusOK, `name="username"`)
	next := f.login(tb, b, login, "alice", alicePassword)
	consent := b.get(tb, f.base+next.location)
	if consent.status == http.StatusOK {
		consent.mustBe(tb, http.StatusOK, ">Allow<")
		consent = f.consent(tb, b, consent, "allow", agents...)
	} // else the grant covers the request: no consent page
	q := redirected(tb, consent, c)
	if q.Get("code") == "" {
		tb.Fatalf("no code in the redirect: %v", q)
	}
	return q.Get("code")
}

// tokenResponse is the token endpoint's answer.
type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	RefreshToken     string `json:"refresh_token"`
	Scope            string `json:"scope"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	status           int
}

// token posts to the token endpoint as the client (Basic for a
// confidential client).
func (f *fixture) token(tb testing.TB, c *client, form url.Values) *tokenResponse {
	tb.Helper()
	if c.Secret == "" {
		form.Set("client_id", c.ID)
	}
	req, err := http.NewRequest(http.MethodPost, f.base+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.Secret != "" {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	}
	status, body := do(tb, f.http.Client(), req)
	var t tokenResponse
	mustJSON(tb, body, &t)
	t.status = status
	return &t
}

// exchange redeems a code.
func (f *fixture) exchange(tb testing.TB, c *client, code string, p pkce) *tokenResponse {
	tb.Helper()
	return f.token(tb, c, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {p.verifier}, "redirect_uri": {c.RedirectURI}})
}

// mustTokens walks the whole flow and returns the tokens.
func (f *fixture) mustTokens(tb testing.TB, c *client, resource string, agents ...string) *tokenResponse {
	tb.Helper()
	p := newPKCE()
	t := f.exchange(tb, c, f.mustCode(tb, c, p, resource, agents...), p)
	if t.status != http.StatusOK {
		tb.Fatalf("token: %d %s: %s", t.status, t.Error, t.ErrorDescription)
	}
	return t
}

// refresh uses a refresh token.
func (f *fixture) refresh(tb testing.TB, c *client, refreshToken string) *tokenResponse {
	tb.Helper()
	return f.token(tb, c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}})
}

// mustError fails unless t is the given OAuth error.
func (t *tokenResponse) mustError(tb testing.TB, status int, code string) {
	tb.Helper()
	if t.status != status || t.Error != code {
		tb.Fatalf("token response = %d %q (%s), want %d %q", t.status, t.Error, t.ErrorDescription, status, code)
	}
}

// mustStatus fails unless a call got the status.
func mustStatus(tb testing.TB, what string, got int, body string, want int) {
	tb.Helper()
	if got != want {
		tb.Fatalf("%s: status %d (%s), want %d", what, got, body, want)
	}
}

func mustJSON(tb testing.TB, body string, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		tb.Fatalf("decode %q: %v", body, err)
	}
}
