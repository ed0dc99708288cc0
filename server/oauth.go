package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
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
		if host := hostOnly(r.Host); !s.guard.hosts[host] {
			mcp.WriteHTTPError(w, mcpgate.Errorf(mcpgate.EFORBIDDEN, "host %q is not served here; set --public-url or --allowed-hosts to the name clients use", host))
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
// for; a 403 to a request bearing an
// OAuth access token says insufficient_scope, so that the client can ask
// the user to grant the agent.
func (s *Server) challenge(w http.ResponseWriter, r *http.Request, err error) {
	meta := s.guard.base + "/.well-known/oauth-protected-resource" + r.URL.EscapedPath()
	switch mcpgate.ErrorCode(err) {
	case mcpgate.EUNAUTHORIZED:
		if r.PathValue("agent") == "" { // not an OAuth resource: no scope to ask for
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="MCP", resource_metadata=%q`, meta))
			return
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="MCP", resource_metadata=%q, scope=%q`, meta, oauthScope))
	case mcpgate.EFORBIDDEN:
		if bearsAccessToken(r) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="MCP", error="insufficient_scope", scope=%q, resource_metadata=%q, error_description=%q`,
				oauthScope, meta, strings.ReplaceAll(mcpgate.ErrorMessage(err), `"`, "'")))
		}
	}
}

// bearsAccessToken reports whether the request's bearer credential is an
// OAuth access token rather than an API key.
func bearsAccessToken(r *http.Request) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return ok && strings.EqualFold(scheme, "Bearer") && !strings.HasPrefix(token, mcpgate.UserKeyPrefix) && !strings.HasPrefix(token, mcpgate.AgentKeyPrefix)
}
