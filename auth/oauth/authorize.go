package oauth

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// authRequest is a checked authorization request.
type authRequest struct {
	client      *mcpgate.OAuthClient
	redirectURI string
	state       string
	challenge   string
	resource    string // canonical
	agentID     string // the agent resource names, "" for every agent
	query       url.Values
}

// authError is a refused authorization request. Before the client and its
// redirect URI are known good it is shown on a page; after, it goes back
// to the client on the redirect URI.
type authError struct {
	*oauthError
	redirect bool
}

// parseAuthorize checks an authorization request's parameters.
func (s *Server) parseAuthorize(ctx context.Context, q url.Values) (*authRequest, *authError) {
	for _, p := range []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "resource", "scope"} {
		if len(q[p]) > 1 {
			return nil, &authError{oauthError: errorf(http.StatusBadRequest, "invalid_request", "parameter "+p+" is repeated")}
		}
	}
	ar := &authRequest{redirectURI: q.Get("redirect_uri"), state: q.Get("state"), challenge: q.Get("code_challenge"), query: q}
	c, err := s.client(ctx, q.Get("client_id"))
	switch {
	case q.Get("client_id") == "":
		return nil, &authError{oauthError: errorf(http.StatusBadRequest, "invalid_request", "client_id is required")}
	case err != nil:
		return nil, &authError{oauthError: errorf(http.StatusBadRequest, "invalid_client", "unknown client: "+mcpgate.ErrorMessage(err))}
	case !slices.Contains(c.RedirectURIs, ar.redirectURI):
		return nil, &authError{oauthError: errorf(http.StatusBadRequest, "invalid_request", "redirect_uri "+quote(ar.redirectURI)+" is not one the client registered")}
	}
	ar.client = c
	if e := s.checkFlow(ar, q); e != nil {
		return ar, &authError{oauthError: e, redirect: true}
	}
	return ar, nil
}

// checkFlow checks the parameters that are reported on the redirect URI:
// response type, PKCE (S256 only) and the resource (RFC 8707).
func (s *Server) checkFlow(ar *authRequest, q url.Values) *oauthError {
	bad := func(code, d string) *oauthError { return errorf(http.StatusBadRequest, code, d) }
	var ok bool
	switch {
	case q.Get("response_type") != "code":
		return bad("unsupported_response_type", "response_type must be code")
	case ar.challenge == "":
		return bad("invalid_request", "code_challenge is required: PKCE with S256")
	case q.Get("code_challenge_method") != "S256":
		return bad("invalid_request", "code_challenge_method must be S256; plain is refused")
	case !challengePattern.MatchString(ar.challenge):
		return bad("invalid_request", "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)")
	case q.Get("resource") == "":
		return bad("invalid_target", "resource is required: the agent's MCP URL, such as "+s.agentURL("{agentId}"))
	}
	if ar.resource, ar.agentID, ok = s.parseResource(q.Get("resource")); !ok {
		return bad("invalid_target", "resource "+quote(q.Get("resource"))+" is not an MCP endpoint of this gateway ("+s.agentURL("{agentId}")+" or "+s.base+")")
	}
	for _, sc := range strings.Fields(q.Get("scope")) {
		if sc != Scope {
			return bad("invalid_scope", "the only scope is "+Scope)
		}
	}
	return nil
}

// handleAuthorize starts an authorization: the login page when nobody is
// signed in, the consent page when the user has not yet granted what the
// client asks for, else straight back to the client with a code.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	ar, e := s.parseAuthorize(r.Context(), r.URL.Query())
	if e != nil {
		s.refuse(w, r, ar, e)
		return
	}
	user := s.currentUser(r)
	if user == nil {
		s.render(w, http.StatusOK, "login", s.newLoginPage(w, r, ar))
		return
	}
	g, err := s.opts.Store.FindOAuthGrant(r.Context(), user.ID, ar.client.ID)
	if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		s.fail(w, err)
		return
	}
	if err == nil && ar.coveredBy(g) {
		usable, err := s.usable(r.Context(), user.ID, ar, g)
		if err != nil {
			s.fail(w, err)
			return
		}
		// A grant whose agents the user no longer owns or has disabled
		// would yield a token the MCP endpoint refuses, and the client
		// would come straight back here: ask the user instead, on the
		// consent page, which says what is wrong.
		if usable {
			s.approve(w, r, ar, user, g)
			return
		}
	}
	s.showConsent(w, r, ar, user, http.StatusOK, "")
}

// usable reports whether a code issued under the grant would be good for
// something: the agent the resource names, or for the base resource one of
// the agents granted, is still an MCP-enabled agent of the user's.
func (s *Server) usable(ctx context.Context, userID string, ar *authRequest, g *mcpgate.OAuthGrant) (bool, error) {
	agents, err := s.ownedAgents(ctx, userID)
	if err != nil {
		return false, err
	}
	for _, a := range agents {
		if a.MCPEnabled && (a.ID == ar.agentID || (ar.agentID == "" && slices.Contains(g.Agents, a.ID))) {
			return true, nil
		}
	}
	return false, nil
}

// coveredBy reports whether the grant covers the request: the agent it
// names, or any agent for the base resource.
func (ar *authRequest) coveredBy(g *mcpgate.OAuthGrant) bool {
	if ar.agentID == "" {
		return len(g.Agents) > 0
	}
	return slices.Contains(g.Agents, ar.agentID)
}

// currentUser returns the signed-in user, or nil.
func (s *Server) currentUser(r *http.Request) *mcpgate.User {
	id := s.sessionUserID(r)
	if id == "" {
		return nil
	}
	u, err := s.opts.Store.FindUserByID(r.Context(), id)
	if err != nil {
		return nil
	}
	return u
}

// approve issues a code under the grant and sends the browser back to the
// client with it.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, ar *authRequest, user *mcpgate.User, g *mcpgate.OAuthGrant) {
	code, err := s.issueCode(r.Context(), ar, user, g)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.redirect(w, r, ar, url.Values{"code": {code}})
}

// refuse answers a refused request: on a page when the client or redirect
// URI is in doubt, else on the redirect URI.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, ar *authRequest, e *authError) {
	if !e.redirect {
		s.renderError(w, e.Status, "This sign-in request is not valid", e.Description)
		return
	}
	s.redirect(w, r, ar, url.Values{"error": {e.Code}, "error_description": {e.Description}})
}

// redirect sends the browser to the client's redirect URI with params,
// the state and the issuer (RFC 9207).
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, ar *authRequest, params url.Values) {
	u, err := url.Parse(ar.redirectURI)
	if err != nil {
		s.renderError(w, http.StatusBadRequest, "This sign-in request is not valid", "the redirect URI is malformed")
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	q.Set("iss", s.base)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, u.String(), status)
}

// fail shows an unexpected failure.
func (s *Server) fail(w http.ResponseWriter, err error) {
	s.opts.Logger.Error("OAuth authorization", "err", err)
	s.renderError(w, http.StatusInternalServerError, "Something went wrong", mcpgate.ErrorMessage(err))
}

// clientName is how pages name a client.
func clientName(c *mcpgate.OAuthClient) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}
