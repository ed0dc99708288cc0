package main

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/auth"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// mustSignIn gives the user a password and signs a browser (a client with
// a cookie jar) in through the login page.
func (g *testGateway) mustSignIn(tb testing.TB, name string) *http.Client {
	tb.Helper()
	ctx := context.Background()
	u, err := g.store.FindUserByName(ctx, name)
	if err != nil {
		tb.Fatal(err)
	}
	if u.PasswordHash, err = auth.HashPassword("a long test password"); err != nil {
		tb.Fatal(err)
	}
	if err := g.store.UpdateUser(ctx, u); err != nil {
		tb.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(g.URL() + "/oauth/login?return=/ui/")
	if err != nil {
		tb.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(page)
	if m == nil {
		tb.Fatalf("login page without a CSRF field:\n%s", page)
	}
	resp, err = c.PostForm(g.URL()+"/oauth/login", url.Values{"csrf": {html.UnescapeString(string(m[1]))}, "return": {"/ui/"},
		"username": {name}, "password": {"a long test password"}})
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		tb.Fatalf("sign in: HTTP %d", resp.StatusCode)
	}
	return c
}

// TestDashboardStreamsEndOnDrain: the dashboard's live approvals stream
// ends when the drain begins, so that it does not hold the shutdown until
// its timeout, and a new one is refused (the page polls instead).
func TestDashboardStreamsEndOnDrain(t *testing.T) {
	t.Parallel()
	g := mustStartMain(t, strings.ReplaceAll(drainConfig, "%s", "http://127.0.0.1:1"))
	browser := g.mustSignIn(t, "alice")
	resp, err := browser.Get(g.URL() + "/ui/approvals/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("retry: 5000\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || resp.StatusCode != http.StatusOK || string(first) != "retry: 5000\n\n" {
		t.Fatalf("events: HTTP %d %q %v", resp.StatusCode, first, err)
	}
	g.StartDrain()
	if rest, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("the stream did not end cleanly: %v (%q)", err, rest)
	}
	again, err := browser.Get(g.URL() + "/ui/approvals/events")
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new stream while draining: HTTP %d, want 503", again.StatusCode)
	}
}
