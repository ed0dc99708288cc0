package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/mcp"
)

// oauthScope is the scope the OAuth authorization server (auth/oauth)
// issues and the MCP endpoint requires: calling the granted agents' tools.
const oauthScope = "mcp"

// OAuthServer is the gateway's OAuth authorization server.
type OAuthServer interface {
	// Handlers returns its handlers (metadata documents and /oauth
	// endpoints) by http.ServeMux pattern.
	Handlers() map[string]http.Handler
}

// oauthRoutes serves the OAuth server's handlers, each measured under its
// pattern. The login and consent pages sit behind the Host/Origin guard
// like every route; the metadata documents and the register, token and
// revoke endpoints, which take no cookies, are open to browser-based
// clients of any origin (CORS), as clients such as a local MCP Inspector
// need.
func (s *Server) oauthRoutes() {
	if s.opts.OAuth == nil {
		return
	}
	for pattern, h := range s.opts.OAuth.Handlers() {
		_, path, _ := strings.Cut(pattern, " ")
		if strings.HasPrefix(path, "/oauth/authorize") || strings.HasPrefix(path, "/oauth/login") {
			s.handle(pattern, pattern, h)
			continue
		}
		open := s.measure(pattern, s.openToBrowsers(h))
		s.mux.Handle(pattern, open)
		s.mux.Handle("OPTIONS "+path, open) // preflights
	}
}

// openToBrowsers checks the Host like the guard but lets any Origin read
// the response, answering preflights itself.
func (s *Server) openToBrowsers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.guard.checkHost(r); err != nil {
			mcp.WriteHTTPError(w, err)
			return
		}
		if r.Header.Get("Origin") != "" {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate")
		}
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// challenge sets the WWW-Authenticate header of a refused MCP request
// (RFC 6750, RFC 9728, MCP authorization): a 401 names the protected
// resource metadata and, at an agent's MCP endpoint, the scope to ask
// for; when the request presented a credential that was refused (unknown,
// expired, revoked, for another resource) it also says invalid_token
// (RFC 6750 §3), so that the client knows to refresh or sign in again. A
// 401 for an agent that is not MCP-enabled does not say invalid_token:
// the token is fine, a new one would not help (the authorization endpoint
// shows the user why instead of approving again). A 403 to a request
// bearing an OAuth access token says insufficient_scope, so that the
// client can ask the user to grant the agent.
func (s *Server) challenge(w http.ResponseWriter, r *http.Request, err error) {
	meta := s.guard.base + "/.well-known/oauth-protected-resource" + r.URL.EscapedPath()
	switch mcpgate.ErrorCode(err) {
	case mcpgate.EUNAUTHORIZED:
		h := fmt.Sprintf(`Bearer realm="MCP", resource_metadata=%q`, meta)
		agent := r.PathValue("agent")
		if agent != "" { // an OAuth resource: name the scope to ask for
			h += fmt.Sprintf(`, scope=%q`, oauthScope)
		}
		if presentsCredential(r) && !s.disabledAgent(agent) {
			h += fmt.Sprintf(`, error="invalid_token", error_description="%s"`, challengeText(mcpgate.ErrorMessage(err)))
		}
		w.Header().Set("WWW-Authenticate", h)
	case mcpgate.EFORBIDDEN:
		if bearsAccessToken(r) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="MCP", error="insufficient_scope", scope=%q, resource_metadata=%q, error_description="%s"`,
				oauthScope, meta, challengeText(mcpgate.ErrorMessage(err))))
		}
	}
}

// presentsCredential reports whether the request carries a bearer
// credential or an agent key, as opposed to none at all or one of another
// scheme, which RFC 6750 §3.1 answers without an error code.
func presentsCredential(r *http.Request) bool {
	scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(r.Header.Get(auth.HeaderAgentKey)) != ""
}

// disabledAgent reports whether id names an agent that is not MCP-enabled.
func (s *Server) disabledAgent(id string) bool {
	if id == "" || s.opts.Tables == nil {
		return false
	}
	t, ok := s.opts.Tables.Table(id)
	return ok && !t.Agent.MCPEnabled
}

// challengeText makes s fit an auth-param quoted string as RFC 6750 §3
// allows for error_description: printable ASCII without '"' and '\'.
func challengeText(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c == '"':
			return '\''
		case c == '\\' || c < 0x20 || c > 0x7e:
			return '?'
		}
		return c
	}, s)
}

// bearsAccessToken reports whether the request's bearer credential is an
// OAuth access token rather than an API key.
func bearsAccessToken(r *http.Request) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return ok && strings.EqualFold(scheme, "Bearer") && !strings.HasPrefix(token, mcpgate.UserKeyPrefix) && !strings.HasPrefix(token, mcpgate.AgentKeyPrefix)
}
