package ui_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/auth/oauth"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/mcpgate/mcpgate/ui"
)

// password is every fixture user's password.
const password = "correct horse battery staple"

// fixture is the dashboard and the OAuth server's sign-in over a real
// SQLite store, served over TLS on 127.0.0.1 (so that cookies are
// __Host- and Secure, as in production). alice owns agent shop, bob owns
// bobs, root is an admin.
type fixture struct {
	store *sqlstore.Store
	http  *httptest.Server
	opts  *ui.Options
	ui    *ui.Handler
	users map[string]*mcpgate.User
}

// mustFixture builds the fixture; adjust may change the dashboard's
// options before it is made.
func mustFixture(tb testing.TB, adjust func(*ui.Options)) *fixture {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	f := &fixture{store: st, users: map[string]*mcpgate.User{}}
	mux := http.NewServeMux()
	f.http = httptest.NewUnstartedServer(mux)
	f.http.StartTLS()
	tb.Cleanup(f.http.Close)
	as, err := oauth.New(ctx, &oauth.Options{Store: st, PublicURL: f.http.URL})
	if err != nil {
		tb.Fatal(err)
	}
	reg := registry.New(st, nil)
	f.opts = &ui.Options{Store: st, Sessions: as, LoginURL: oauth.LoginURL, PublicURL: f.http.URL, Tables: reg, Changed: reg.Reload}
	if adjust != nil {
		adjust(f.opts)
	}
	d := ui.New(f.opts)
	tb.Cleanup(d.Close) // before the store's Close: cleanups run last first
	f.ui = d
	for _, p := range d.Paths() {
		mux.Handle(p, d)
	}
	for p, h := range as.Handlers() {
		mux.Handle(p, h)
	}
	f.mustUser(tb, "alice", false, "shop")
	f.mustUser(tb, "bob", false, "bobs")
	f.mustUser(tb, "root", true)
	if err := reg.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	return f
}

// mustUser creates a user with the fixture's password and its agents.
func (f *fixture) mustUser(tb testing.TB, name string, admin bool, agents ...string) {
	tb.Helper()
	ctx := context.Background()
	hash, err := auth.HashPassword(password)
	if err != nil {
		tb.Fatal(err)
	}
	u := &mcpgate.User{Name: name, PasswordHash: hash, Admin: admin, Source: mcpgate.SourceCLI}
	if err := f.store.CreateUser(ctx, u); err != nil {
		tb.Fatal(err)
	}
	f.users[name] = u
	for _, id := range agents {
		a := &mcpgate.Agent{ID: id, Name: "Agent " + id, OwnerID: u.ID, MCPEnabled: true, Source: mcpgate.SourceCLI}
		if err := f.store.CreateAgent(ctx, a); err != nil {
			tb.Fatal(err)
		}
	}
}

// browser is one user's cookie jar against the fixture.
type browser struct {
	f      *fixture
	client *http.Client
}

// newBrowser returns a browser that follows no redirects.
func (f *fixture) newBrowser(tb testing.TB) *browser {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	c := *f.http.Client() // a copy: the server hands out one client
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{f: f, client: &c}
}

// mustSignIn signs the browser in as the user through the OAuth login
// page.
func (f *fixture) mustSignIn(tb testing.TB, name string) *browser {
	tb.Helper()
	b := f.newBrowser(tb)
	_, page := b.get(tb, oauth.LoginURL("/ui/"))
	code, _, loc := b.post(tb, "/oauth/login", url.Values{
		"csrf": {csrfOf(tb, page)}, "return": {"/ui/"}, "username": {name}, "password": {password},
	})
	if code != http.StatusSeeOther || loc != "/ui/" {
		tb.Fatalf("sign in as %s: %d to %q", name, code, loc)
	}
	return b
}

// get fetches a path, returning the status and body.
func (b *browser) get(tb testing.TB, path string) (int, string) {
	tb.Helper()
	resp, err := b.client.Get(b.f.http.URL + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// post submits a form, returning the status, body and Location.
func (b *browser) post(tb testing.TB, path string, form url.Values) (int, string, string) {
	tb.Helper()
	resp, err := b.client.PostForm(b.f.http.URL+path, form)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get("Location")
}

// submit loads page and posts form to path with the page's CSRF token.
func (b *browser) submit(tb testing.TB, page, path string, form url.Values) (int, string, string) {
	tb.Helper()
	_, body := b.get(tb, page)
	form.Set("csrf", csrfOf(tb, body))
	return b.post(tb, path, form)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf returns the CSRF token of a page's first form.
func csrfOf(tb testing.TB, page string) string {
	tb.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		tb.Fatalf("no CSRF field in page:\n%s", page)
	}
	return html.UnescapeString(m[1])
}

// mustContain fails unless body contains each string.
func mustContain(tb testing.TB, body string, want ...string) {
	tb.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			tb.Fatalf("page lacks %q:\n%s", w, body)
		}
	}
}
