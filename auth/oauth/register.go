package oauth

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// maxFormBytes bounds the bodies of registration, token, revocation and
// form requests.
const maxFormBytes = 64 << 10

// registration is a client's metadata in a registration request and
// response (RFC 7591 §2).
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// registered is the registration response (RFC 7591 §3.2.1).
type registered struct {
	ClientID              string `json:"client_id"`
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientIDIssuedAt      int64  `json:"client_id_issued_at"`
	ClientSecretExpiresAt *int64 `json:"client_secret_expires_at,omitempty"`
	registration
}

// handleRegister registers a client (RFC 7591).
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	if !s.register.allow(clientAddr(r)) {
		w.Header().Set("Retry-After", strconv.Itoa(int(s.opts.RegisterLimit.Every/time.Second)+1))
		writeOAuthError(w, errorf(http.StatusTooManyRequests, "temporarily_unavailable", "too many registrations from this address; try again later"))
		return
	}
	var reg registration
	if e := decodeRegistration(w, r, &reg); e != nil {
		writeOAuthError(w, e)
		return
	}
	if e := reg.normalize(); e != nil {
		writeOAuthError(w, e)
		return
	}
	resp, err := s.createClient(r, &reg)
	if err != nil {
		s.opts.Logger.Error("register OAuth client", "err", err)
		writeOAuthError(w, errorf(http.StatusInternalServerError, "server_error", "the client could not be registered"))
		return
	}
	writeJSONStatus(w, http.StatusCreated, resp)
}

// decodeRegistration reads a JSON registration request.
func decodeRegistration(w http.ResponseWriter, r *http.Request, reg *registration) *oauthError {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return errorf(http.StatusBadRequest, "invalid_client_metadata", "send the client metadata as application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxFormBytes))
	if err := dec.Decode(reg); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, "invalid_client_metadata", "the client metadata is too large")
		}
		return errorf(http.StatusBadRequest, "invalid_client_metadata", "the client metadata is not a JSON object of the RFC 7591 fields: "+err.Error())
	}
	return nil
}

// normalize fills in RFC 7591's defaults and checks the metadata.
func (reg *registration) normalize() *oauthError {
	if reg.TokenEndpointAuthMethod == "" {
		reg.TokenEndpointAuthMethod = mcpgate.AuthMethodBasic // RFC 7591 §2
	}
	if len(reg.GrantTypes) == 0 {
		reg.GrantTypes = []string{"authorization_code"}
	}
	if len(reg.ResponseTypes) == 0 {
		reg.ResponseTypes = []string{"code"}
	}
	bad := func(d string) *oauthError { return errorf(http.StatusBadRequest, "invalid_client_metadata", d) }
	switch {
	case !slices.Contains(authMethods(), reg.TokenEndpointAuthMethod):
		return bad("token_endpoint_auth_method must be none, client_secret_basic or client_secret_post")
	case !subset(reg.GrantTypes, "authorization_code", "refresh_token") || !slices.Contains(reg.GrantTypes, "authorization_code"):
		return bad("grant_types must include authorization_code and may include refresh_token, nothing else")
	case !subset(reg.ResponseTypes, "code"):
		return bad("response_types may only be code")
	case len(reg.ClientName) > 200:
		return bad("client_name is longer than 200 characters")
	case !webURL(reg.ClientURI) || !webURL(reg.LogoURI):
		return bad("client_uri and logo_uri must be http(s) URLs")
	case len(reg.RedirectURIs) == 0:
		return errorf(http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required for the authorization code flow")
	}
	for _, u := range reg.RedirectURIs {
		if p := checkRedirectURI(u); p != "" {
			return errorf(http.StatusBadRequest, "invalid_redirect_uri", p)
		}
	}
	reg.GrantTypes = []string{"authorization_code", "refresh_token"} // refresh tokens are always issued
	reg.Scope = Scope
	return nil
}

// createClient stores the client, with a secret for a confidential one.
func (s *Server) createClient(r *http.Request, reg *registration) (*registered, error) {
	c := &mcpgate.OAuthClient{ID: mcpgate.NewID("cl_"), Name: reg.ClientName, RedirectURIs: reg.RedirectURIs,
		AuthMethod: reg.TokenEndpointAuthMethod, ClientURI: reg.ClientURI, LogoURI: reg.LogoURI}
	resp := &registered{registration: *reg}
	if c.AuthMethod != mcpgate.AuthMethodNone {
		resp.ClientSecret = randomToken()
		c.SecretHash = auth.HashSecret(resp.ClientSecret)
		never := int64(0)
		resp.ClientSecretExpiresAt = &never
	}
	if err := s.opts.Store.CreateOAuthClient(r.Context(), c); err != nil {
		return nil, err
	}
	resp.ClientID, resp.ClientIDIssuedAt = c.ID, c.CreatedAt.Unix()
	return resp, nil
}

// subset reports whether every value is one of allowed.
func subset(values []string, allowed ...string) bool {
	for _, v := range values {
		if !slices.Contains(allowed, v) {
			return false
		}
	}
	return true
}

// webURL reports whether raw is empty or an absolute http(s) URL.
func webURL(raw string) bool {
	if raw == "" {
		return true
	}
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
