package server

import (
	"net/http"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
)

// handleMCP authenticates and authorizes a request to /{agent}/mcp and
// hands it to the MCP server.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agent")
	cred, err := s.opts.Auth.Authenticate(r)
	if err != nil {
		s.writeAuthError(w, r, err)
		return
	}
	t, ok := s.opts.Tables.Table(agentID)
	if !ok {
		mcp.WriteHTTPError(w, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", agentID))
		return
	}
	if err := cred.Authorize(t.Agent); err != nil {
		s.writeAuthError(w, r, err)
		return
	}
	s.opts.MCP.ServeAgent(w, r, t.Agent, cred)
}

// authenticated authenticates a request before h, refusing a missing or
// bad credential as the MCP endpoint does: 401 with an OAuth challenge.
func (s *Server) authenticated(h func(w http.ResponseWriter, r *http.Request, cred *mcpgate.Credential)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred, err := s.opts.Auth.Authenticate(r)
		if err != nil {
			s.writeAuthError(w, r, err)
			return
		}
		h(w, r, cred)
	})
}

// writeAuthError writes an authentication or authorization failure with
// its OAuth challenge: a 401 tells the client where the protected resource
// metadata of the requested resource lives (RFC 9728, path-inserted form)
// and a 403 to an access token says insufficient_scope.
func (s *Server) writeAuthError(w http.ResponseWriter, r *http.Request, err error) {
	s.challenge(w, r, err)
	mcp.WriteHTTPError(w, err)
}
