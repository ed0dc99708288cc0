package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Cookie names. With secure cookies they carry the __Host- prefix, which
// binds them to this host and path /, and requires Secure.
const (
	sessionCookie = "mcpgate_session"
	csrfCookie    = "mcpgate_csrf"
)

// secureCookies reports whether cookies are marked Secure and __Host-
// prefixed: when the public URL is https, or on loopback, which browsers
// treat as a secure context (Chromium keeps Secure cookies on
// http://127.0.0.1 and http://localhost). On plain http elsewhere (a
// gateway on a private network without TLS) browsers would drop them.
func secureCookies(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	return u.Scheme == "https" || isLoopbackHost(u.Hostname())
}

// cookieName returns the name of a cookie as this server sets it.
func (s *Server) cookieName(name string) string {
	if s.secure {
		return "__Host-" + name
	}
	return name
}

// setCookie sets an HttpOnly, SameSite=Lax cookie on path /.
func (s *Server) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(name), Value: value, Path: "/", MaxAge: int(maxAge / time.Second),
		Secure: s.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
}

// cookie returns a cookie's value, "" when absent.
func (s *Server) cookie(r *http.Request, name string) string {
	c, err := r.Cookie(s.cookieName(name))
	if err != nil {
		return ""
	}
	return c.Value
}

// mac returns the base64url HMAC-SHA256 of msg under a key derived from
// secret for purpose, so that a cookie of one kind never passes for
// another.
func mac(secret []byte, purpose, msg string) string {
	k := hmac.New(sha256.New, secret)
	k.Write([]byte(purpose))
	h := hmac.New(sha256.New, k.Sum(nil))
	h.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// signed reports whether sig is msg's MAC under any signing key.
func (s *Server) signed(purpose, msg, sig string) bool {
	for _, k := range s.keys.all() {
		if hmac.Equal([]byte(mac(k.Secret, purpose, msg)), []byte(sig)) {
			return true
		}
	}
	return false
}

// startSession signs the user in: the cookie holds the user ID and expiry,
// signed.
func (s *Server) startSession(w http.ResponseWriter, userID string) {
	exp := s.opts.Now().Add(s.opts.SessionTTL)
	msg := base64.RawURLEncoding.EncodeToString([]byte(userID)) + "." + strconv.FormatInt(exp.Unix(), 10)
	s.setCookie(w, sessionCookie, msg+"."+mac(s.keys.signing().Secret, "session", msg), s.opts.SessionTTL)
}

// sessionUserID returns the signed-in user's ID, "" when there is none or
// the session expired.
func (s *Server) sessionUserID(r *http.Request) string {
	v := s.cookie(r, sessionCookie)
	i := strings.LastIndexByte(v, '.')
	if i < 0 || !s.signed("session", v[:i], v[i+1:]) {
		return ""
	}
	id, exp, _ := strings.Cut(v[:i], ".")
	secs, err := strconv.ParseInt(exp, 10, 64)
	user, err2 := base64.RawURLEncoding.DecodeString(id)
	if err != nil || err2 != nil || s.opts.Now().Unix() >= secs {
		return ""
	}
	return string(user)
}

// csrfToken returns the token a form must carry: the MAC of the browser's
// CSRF cookie, which it sets when absent. A page on another site can
// neither read the cookie nor compute the MAC.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	seed := s.cookie(r, csrfCookie)
	if len(seed) < 32 {
		seed = randomToken()
		s.setCookie(w, csrfCookie, seed, 0)
	}
	return mac(s.keys.signing().Secret, "csrf", seed)
}

// checkCSRF reports whether the form's csrf field matches the browser's
// CSRF cookie.
func (s *Server) checkCSRF(r *http.Request) bool {
	seed, token := s.cookie(r, csrfCookie), r.PostFormValue("csrf")
	return len(seed) >= 32 && token != "" && s.signed("csrf", seed, token)
}
