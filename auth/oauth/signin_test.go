package oauth_test

import (
	"net/http"
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
