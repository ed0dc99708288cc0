package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// FuzzParseResource: whatever a client sends as resource, what is accepted
// is the base URL or the canonical MCP URL of a valid agent ID, and
// parsing that again gives the same.
func FuzzParseResource(f *testing.F) {
	s := &Server{base: "https://gw.example/base"}
	for _, seed := range []string{"https://gw.example/base", "https://GW.example/base/shop/mcp/", "https://gw.example/base/a/b/mcp",
		"https://gw.example/base/%2e%2e/mcp", "https://gw.example/base/shop/mcp?x=1", "https://gw.example/base/shop/mcp#f", "//gw.example/base"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		res, id, ok := s.parseResource(raw)
		if !ok {
			return
		}
		switch {
		case id == "" && res != s.base:
			t.Fatalf("parseResource(%q) = %q with no agent, want the base", raw, res)
		case id != "" && (!mcpgate.ValidAgentID(id) || res != s.agentURL(id)):
			t.Fatalf("parseResource(%q) = %q, agent %q", raw, res, id)
		}
		if res2, id2, ok2 := s.parseResource(res); !ok2 || res2 != res || id2 != id {
			t.Fatalf("parseResource(%q) = %q %q %v, not canonical", res, res2, id2, ok2)
		}
	})
}

// FuzzRedirectAndDocumentURL: an accepted redirect URI is an absolute
// https URL, or http on loopback, without fragment or user information;
// a document client_id is an https URL without credentials.
func FuzzRedirectAndDocumentURL(f *testing.F) {
	for _, seed := range []string{"https://app.example/cb", "http://127.0.0.1:9/cb", "http://localhost./cb", "http://[::1]/cb",
		"http://127.0.0.1.evil.example/cb", "https://u:p@app.example/cb", "https://app.example/cb#x", "javascript://x/%0aalert(1)", "HTTPS://APP.example/a.json"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkRedirectURI(raw) == "" {
			u, err := url.Parse(raw)
			if err != nil || u.Fragment != "" || u.User != nil || u.Host == "" ||
				!(u.Scheme == "https" || (u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
				t.Fatalf("redirect URI %q accepted", raw)
			}
		}
		if isDocumentURL(raw) {
			u, err := url.Parse(raw)
			if err != nil || u.Scheme != "https" || u.User != nil || u.Host == "" {
				t.Fatalf("document URL %q accepted", raw)
			}
		}
	})
}

// keysOnly is a store holding only signing keys.
type keysOnly struct {
	mcpgate.OAuthStore
	keys []*mcpgate.OAuthSigningKey
}

func (k *keysOnly) ListOAuthSigningKeys(context.Context) ([]*mcpgate.OAuthSigningKey, error) {
	return k.keys, nil
}

// fuzzServer is a server with one signing key and a fixed clock.
func fuzzServer() (*Server, time.Time) {
	now := time.Unix(1_800_000_000, 0)
	key := &mcpgate.OAuthSigningKey{ID: "sk_1", Secret: []byte("0123456789abcdef0123456789abcdef")}
	s := &Server{base: "https://gw.example", opts: Options{Now: func() time.Time { return now }, AccessTTL: time.Hour, SessionTTL: time.Hour}}
	s.keys = &keyring{store: &keysOnly{keys: []*mcpgate.OAuthSigningKey{key}}, now: s.opts.Now}
	s.keys.set([]*mcpgate.OAuthSigningKey{key})
	return s, now
}

// FuzzAccessToken: a token the parser accepts carries a valid HS256
// signature under the key, an unexpired expiry and this issuer, whatever
// its header says.
func FuzzAccessToken(f *testing.F) {
	s, now := fuzzServer()
	tok, err := s.signAccessToken(&tokenFamily{family: &mcpgate.OAuthFamily{ID: "fam_1", UserID: "u", ClientID: "c"},
		resource: "https://gw.example/shop/mcp", scope: "mcp", agents: []string{"shop"}})
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	f.Add(tok)
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":7}`)) + "." + parts[1] + "." + parts[2])
	f.Add(parts[0] + "." + parts[1] + "." + parts[2] + "=")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := s.parseAccessToken(context.Background(), token, false)
		if err != nil {
			return
		}
		p := strings.Split(token, ".")
		if len(p) != 3 {
			t.Fatalf("accepted %q: not three parts", token)
		}
		h := hmac.New(sha256.New, s.keys.signing().Secret)
		h.Write([]byte(p[0] + "." + p[1]))
		sig, _ := base64.RawURLEncoding.DecodeString(p[2])
		if !hmac.Equal(sig, h.Sum(nil)) {
			t.Fatalf("accepted %q without a valid HS256 signature", token)
		}
		if c.Issuer != s.base || c.ExpiresAt == nil || !now.Before(c.ExpiresAt.Add(5*time.Second)) {
			t.Fatalf("accepted %q: claims %+v", token, c.RegisteredClaims)
		}
	})
}

// FuzzSessionCookie: a session cookie is honoured only when it is the MAC
// of its contents under the key and has not expired.
func FuzzSessionCookie(f *testing.F) {
	s, now := fuzzServer()
	rec := &fakeWriter{h: http.Header{}}
	s.startSession(rec, "usr_1")
	cookie := strings.TrimPrefix(strings.SplitN(rec.h.Get("Set-Cookie"), ";", 2)[0], sessionCookie+"=")
	f.Add(cookie)
	f.Add("dXNyXzE.1.x")
	f.Add("..")
	f.Fuzz(func(t *testing.T, v string) {
		r, _ := http.NewRequest(http.MethodGet, "https://gw.example/", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		if r.Header.Get("Cookie") == "" {
			return // not a cookie value a browser could send
		}
		got, _ := r.Cookie(sessionCookie)
		id := s.sessionUserID(r)
		if id == "" {
			return
		}
		v = got.Value
		i := strings.LastIndexByte(v, '.')
		if i < 0 || !hmac.Equal([]byte(mac(s.keys.signing().Secret, "session", v[:i])), []byte(v[i+1:])) {
			t.Fatalf("session %q honoured without its MAC", v)
		}
		_ = now
	})
}

// fakeWriter records headers.
type fakeWriter struct{ h http.Header }

func (w *fakeWriter) Header() http.Header       { return w.h }
func (w *fakeWriter) Write([]byte) (int, error) { return 0, nil }
func (w *fakeWriter) WriteHeader(int)           {}
