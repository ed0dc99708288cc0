package oauth

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// tokenResponse is a successful token response (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// handleToken exchanges an authorization code, or a refresh token, for
// tokens.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	client, ok := s.clientForm(w, r)
	if !ok {
		return
	}
	var (
		resp *tokenResponse
		e    *oauthError
	)
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		resp, e = s.exchangeCode(r, client)
	case "refresh_token":
		resp, e = s.refresh(r, client)
	case "":
		e = errorf(http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		e = errorf(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	writeJSONStatus(w, http.StatusOK, resp)
}

// exchangeCode redeems an authorization code. A code is good once: a
// second use revokes every token issued from it.
func (s *Server) exchangeCode(r *http.Request, client *mcpgate.OAuthClient) (*tokenResponse, *oauthError) {
	ctx, form := r.Context(), r.PostForm
	code, verifier := form.Get("code"), form.Get("code_verifier")
	if code == "" || verifier == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "code and code_verifier are required")
	}
	c, err := s.opts.Store.UseOAuthCode(ctx, auth.HashSecret(code), s.opts.Now())
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil, invalidGrant("unknown authorization code")
	} else if err != nil {
		return nil, s.serverError(err)
	}
	if c.UsedAt != nil {
		s.revokeFamily(ctx, c.FamilyID)
		return nil, invalidGrant("the authorization code was already used; the tokens issued from it are revoked")
	}
	if e := s.checkCode(c, client, form.Get("redirect_uri"), verifier, form.Get("resource")); e != nil {
		return nil, e
	}
	return s.issueTokens(ctx, c.FamilyID, c.Resource, c.Scope, c.Agents)
}

// checkCode checks a fresh code against the token request.
func (s *Server) checkCode(c *mcpgate.OAuthCode, client *mcpgate.OAuthClient, redirectURI, verifier, resource string) *oauthError {
	switch {
	case c.ClientID != client.ID:
		return invalidGrant("the authorization code was issued to another client")
	case !s.opts.Now().Before(c.ExpiresAt):
		return invalidGrant("the authorization code expired")
	case redirectURI != c.RedirectURI:
		return invalidGrant("redirect_uri differs from the authorization request's")
	case !verifyPKCE(verifier, c.Challenge):
		return invalidGrant("code_verifier does not match the code_challenge")
	}
	return s.sameResource(resource, c.Resource)
}

// refresh rotates a refresh token. Using one a second time revokes its
// whole family: one of the two users is a thief.
func (s *Server) refresh(r *http.Request, client *mcpgate.OAuthClient) (*tokenResponse, *oauthError) {
	ctx, form := r.Context(), r.PostForm
	if form.Get("refresh_token") == "" {
		return nil, errorf(http.StatusBadRequest, "invalid_request", "refresh_token is required")
	}
	hash := auth.HashSecret(form.Get("refresh_token"))
	t, err := s.opts.Store.FindOAuthRefreshToken(ctx, hash)
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
		return nil, invalidGrant("unknown refresh token")
	case err != nil:
		return nil, s.serverError(err)
	case t.ClientID != client.ID: // checked before use, so another client cannot burn it
		return nil, invalidGrant("the refresh token was issued to another client")
	}
	if t, err = s.opts.Store.UseOAuthRefreshToken(ctx, hash, s.opts.Now()); err != nil {
		return nil, s.serverError(err)
	}
	if e := s.checkRefresh(ctx, t, form.Get("scope"), form.Get("resource")); e != nil {
		return nil, e
	}
	agents, err := s.stillGranted(ctx, t)
	if err != nil {
		return nil, s.serverError(err)
	}
	return s.issueTokens(ctx, t.FamilyID, t.Resource, t.Scope, agents)
}

// stillGranted returns the refresh token's agents that the user still
// grants the client (a narrower consent since narrows the new tokens) and
// still owns.
func (s *Server) stillGranted(ctx context.Context, t *mcpgate.OAuthRefreshToken) ([]string, error) {
	g, err := s.opts.Store.FindOAuthGrant(ctx, t.UserID, t.ClientID)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var granted []string
	for _, a := range t.Agents {
		if slices.Contains(g.Agents, a) {
			granted = append(granted, a)
		}
	}
	return s.stillOwned(ctx, t.UserID, granted)
}

// checkRefresh checks a refresh token just used against the request.
func (s *Server) checkRefresh(ctx context.Context, t *mcpgate.OAuthRefreshToken, scope, resource string) *oauthError {
	if t.UsedAt != nil {
		s.revokeFamily(ctx, t.FamilyID)
		return invalidGrant("the refresh token was already used; every token issued with it is revoked")
	}
	if !s.opts.Now().Before(t.ExpiresAt) {
		return invalidGrant("the refresh token expired")
	}
	for _, sc := range strings.Fields(scope) {
		if !strings.Contains(" "+t.Scope+" ", " "+sc+" ") {
			return errorf(http.StatusBadRequest, "invalid_scope", "scope "+quote(sc)+" was not granted")
		}
	}
	return s.sameResource(resource, t.Resource)
}

// sameResource checks a token request's optional resource against the
// one the grant was for.
func (s *Server) sameResource(requested, granted string) *oauthError {
	if requested == "" {
		return nil
	}
	if got, _, ok := s.parseResource(requested); !ok || got != granted {
		return errorf(http.StatusBadRequest, "invalid_target", "resource "+quote(requested)+" differs from the authorized one, "+granted)
	}
	return nil
}

// issueTokens issues an access token and a new refresh token in the
// family, unless the family was revoked.
func (s *Server) issueTokens(ctx context.Context, familyID, resource, scope string, agents []string) (*tokenResponse, *oauthError) {
	f, err := s.opts.Store.FindOAuthFamily(ctx, familyID)
	if err != nil {
		return nil, s.serverError(err)
	}
	if f.RevokedAt != nil {
		return nil, invalidGrant("the grant was revoked; authorize again")
	}
	access, err := s.signAccessToken(&tokenFamily{family: f, resource: resource, scope: scope, agents: agents})
	if err != nil {
		return nil, s.serverError(err)
	}
	refresh, now := randomToken(), s.opts.Now()
	err = s.opts.Store.CreateOAuthRefreshToken(ctx, &mcpgate.OAuthRefreshToken{
		Hash: auth.HashSecret(refresh), FamilyID: f.ID, ClientID: f.ClientID, UserID: f.UserID,
		Resource: resource, Scope: scope, Agents: agents, CreatedAt: now, ExpiresAt: now.Add(s.opts.RefreshTTL),
	})
	if err != nil {
		return nil, s.serverError(err)
	}
	return &tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(s.opts.AccessTTL.Seconds()),
		RefreshToken: refresh, Scope: scope}, nil
}

// revokeFamily revokes a token family, here at once and in the store.
func (s *Server) revokeFamily(ctx context.Context, id string) {
	s.families.revoked(id)
	if err := s.opts.Store.RevokeOAuthFamily(ctx, id, s.opts.Now()); err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		s.opts.Logger.Error("revoke token family", "family", id, "err", err)
	}
}

// invalidGrant is the error for a bad code or refresh token.
func invalidGrant(description string) *oauthError {
	return errorf(http.StatusBadRequest, "invalid_grant", description)
}

// serverError logs an unexpected failure and hides it.
func (s *Server) serverError(err error) *oauthError {
	s.opts.Logger.Error("OAuth token endpoint", "err", err)
	return errorf(http.StatusInternalServerError, "server_error", "the request could not be completed")
}
