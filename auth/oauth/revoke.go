package oauth

import (
	"net/http"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// handleRevoke revokes a refresh or access token (RFC 7009), and with it
// every token of its family. Unknown tokens are answered 200, as the RFC
// asks.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	client, ok := s.clientForm(w, r)
	if !ok {
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		writeOAuthError(w, errorf(http.StatusBadRequest, "invalid_request", "token is required"))
		return
	}
	familyID, owner, err := s.familyOf(r, token)
	if err != nil {
		writeOAuthError(w, s.serverError(err))
		return
	}
	if familyID != "" && owner != client.ID {
		writeOAuthError(w, errorf(http.StatusBadRequest, "unauthorized_client", "the token was issued to another client"))
		return
	}
	if familyID != "" {
		s.revokeFamily(r.Context(), familyID)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// familyOf returns the family and client of a refresh token or an access
// token (expired or not), "" when the token is not one of ours.
func (s *Server) familyOf(r *http.Request, token string) (familyID, clientID string, err error) {
	t, err := s.opts.Store.FindOAuthRefreshToken(r.Context(), auth.HashSecret(token))
	if err == nil {
		return t.FamilyID, t.ClientID, nil
	} else if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		return "", "", err
	}
	c, err := s.parseAccessToken(r.Context(), token, true)
	if err != nil {
		return "", "", nil
	}
	return c.Family, c.ClientID, nil
}
