package oauth_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/mcpgate/mcpgate/auth/oauth"
)

// TestSignIn is the dashboard's plain sign-in: the login page with a
// return path, then the browser back on that path with the session the
// authorization flow uses; a return path to another site falls back to
// /ui/.
func TestSignIn(t *testing.T) {
	f := mustFixture(t, nil)
	for ret, want := range map[string]string{"/ui/keys/": "/ui/keys/", "//evil.example/": "/ui/", "/\\evil.example": "/ui/", "https://evil.example/": "/ui/"} {
		b := f.newBrowser(t)
		login := b.get(t, f.base+oauth.LoginURL(ret))
		login.mustBe(t, http.StatusOK, "Sign in to the dashboard")
		if got := login.hidden().Get("return"); got != want {
			t.Fatalf("return %q: form returns to %q, want %q", ret, got, want)
		}
		wrong := f.login(t, b, login, "alice", "wrong password")
		wrong.mustBe(t, http.StatusUnauthorized, "Wrong user name or password.")
		done := f.login(t, b, login, "alice", alicePassword)
		if done.status != http.StatusSeeOther || done.location != want {
			t.Fatalf("return %q: %d to %q, want %q", ret, done.status, done.location, want)
		}
		again := b.get(t, f.base+oauth.LoginURL(ret))
		if again.status != http.StatusSeeOther || again.location != want {
			t.Fatalf("signed in, login page: %d to %q", again.status, again.location)
		}
	}
}

// TestSignInNeedsCSRF refuses a sign-in form without the browser's CSRF
// token.
func TestSignInNeedsCSRF(t *testing.T) {
	f := mustFixture(t, nil)
	b := f.newBrowser(t)
	b.get(t, f.base+oauth.LoginURL("/ui/"))
	p := b.post(t, f.base+"/oauth/login", url.Values{"return": {"/ui/"}, "username": {"alice"}, "password": {alicePassword}})
	p.mustBe(t, http.StatusForbidden, "This form has expired")
}

// TestSignInShared: one sign-in serves the dashboard and the authorization
// flow (the authorize page goes straight to consent), with the same
// __Host- cookies; SignOut ends it for both.
func TestSignInShared(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	b := f.newBrowser(t)
	login := b.get(t, f.base+oauth.LoginURL("/ui/"))
	done := f.login(t, b, login, "alice", alicePassword)
	for _, ck := range mustCookies(t, done.header) {
		if ck.Name != "__Host-mcpgate_session" || !ck.Secure || !ck.HttpOnly || ck.Path != "/" {
			t.Errorf("cookie %+v: want the __Host- session cookie", ck)
		}
	}
	authorize := f.base + "/oauth/authorize?" + f.authParams(c, newPKCE(), f.agentURL("shop")).Encode()
	b.get(t, authorize).mustBe(t, http.StatusOK, `type="checkbox"`)

	req := httptest.NewRequest(http.MethodGet, "/ui/", nil)
	for _, ck := range b.c.Jar.Cookies(mustURL(t, f.base)) {
		req.AddCookie(ck)
	}
	if id := f.oauth.SessionUser(req); id == "" {
		t.Fatal("SessionUser: nobody signed in")
	}
	rec := httptest.NewRecorder()
	f.oauth.SignOut(rec)
	out := mustCookies(t, rec.Header())
	if len(out) != 1 || out[0].Name != "__Host-mcpgate_session" || out[0].MaxAge >= 0 {
		t.Fatalf("SignOut set %+v, want the session cookie expired", out)
	}
}

func mustURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
