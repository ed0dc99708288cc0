package oauth

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// client returns the client with the given ID: the one its metadata
// document describes when the ID is an https URL, a registered one
// otherwise. Returns ENOTFOUND for an unknown client and EINVALID for an
// unusable document.
func (s *Server) client(ctx context.Context, id string) (*mcpgate.OAuthClient, error) {
	if isDocumentURL(id) {
		return s.docs.get(ctx, id)
	}
	return s.opts.Store.FindOAuthClient(ctx, id)
}

// clientForm reads the form of a token or revocation request and
// authenticates its client. When either fails it answers the request with
// the OAuth error and reports false.
func (s *Server) clientForm(w http.ResponseWriter, r *http.Request) (*mcpgate.OAuthClient, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, errorf(http.StatusBadRequest, "invalid_request", "the body must be an application/x-www-form-urlencoded form"))
		return nil, false
	}
	client, e := s.authenticateClient(r)
	if e != nil {
		writeOAuthError(w, e)
		return nil, false
	}
	return client, true
}

// authenticateClient authenticates the client of a token or revocation
// request: public clients name themselves with client_id, confidential
// ones prove their secret with HTTP Basic or in the form.
func (s *Server) authenticateClient(r *http.Request) (*mcpgate.OAuthClient, *oauthError) {
	id, secret, basic := basicCredentials(r)
	if !basic {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	} else if form := r.PostFormValue("client_id"); form != "" && form != id {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "client_id in the form differs from the one in Authorization")
	}
	if id == "" {
		return nil, errorf(http.StatusUnauthorized, "invalid_client", "client authentication required: send client_id, and the client secret of a confidential client")
	}
	c, err := s.client(r.Context(), id)
	if err != nil {
		return nil, errorf(http.StatusUnauthorized, "invalid_client", "unknown client: "+mcpgate.ErrorMessage(err))
	}
	if c.AuthMethod == mcpgate.AuthMethodNone {
		return c, nil
	}
	if secret == "" || subtle.ConstantTimeCompare([]byte(auth.HashSecret(secret)), []byte(c.SecretHash)) != 1 {
		return nil, errorf(http.StatusUnauthorized, "invalid_client", "wrong or missing client secret")
	}
	return c, nil
}

// basicCredentials reads HTTP Basic client credentials, which RFC 6749
// §2.3.1 form-encodes before base64.
func basicCredentials(r *http.Request) (id, secret string, ok bool) {
	id, secret, ok = r.BasicAuth()
	if !ok {
		return "", "", false
	}
	if v, err := url.QueryUnescape(id); err == nil {
		id = v
	}
	if v, err := url.QueryUnescape(secret); err == nil {
		secret = v
	}
	return id, secret, true
}

// checkRedirectURI returns a description of what is wrong with a redirect
// URI, "" when it is usable: https, or http on a loopback host (a native
// app's local listener), absolute, without a fragment.
func checkRedirectURI(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "redirect URI " + quote(raw) + " is not an absolute URL"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "redirect URI " + quote(raw) + " must not have a fragment"
	case u.User != nil:
		return "redirect URI " + quote(raw) + " must not carry user information"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return ""
	}
	return "redirect URI " + quote(raw) + " must use https, or http on localhost, 127.0.0.1 or [::1]"
}

// isLoopbackHost reports whether a host name is localhost or a loopback
// address.
func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// quote returns s in double quotes, shortened to 200 bytes.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return `"` + s + `"`
}
