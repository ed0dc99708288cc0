package oauth

import (
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// agentURL returns the canonical URL of an agent's MCP endpoint: the
// resource, and the audience, of tokens for that agent.
func (s *Server) agentURL(agentID string) string {
	return s.base + "/" + agentID + "/mcp"
}

// parseResource reads a resource indicator (RFC 8707): the gateway's base
// URL, meaning every agent granted, or one agent's MCP URL. It returns the
// canonical resource and the agent ID ("" for the base URL); ok is false
// when the resource is not served here.
func (s *Server) parseResource(raw string) (resource, agentID string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Fragment != "" || u.RawQuery != "" || u.Host == "" {
		return "", "", false
	}
	canon := canonicalURL(u)
	if canon == s.base {
		return s.base, "", true
	}
	rest, found := strings.CutPrefix(canon, s.base+"/")
	id, isMCP := strings.CutSuffix(rest, "/mcp")
	if !found || !isMCP || !mcpgate.ValidAgentID(id) {
		return "", "", false
	}
	return s.agentURL(id), id, true
}

// requestResource returns the resource a request to the gateway addresses:
// the agent URL of /{agent}/mcp, or "" for any other path.
func (s *Server) requestResource(path string) string {
	rest, ok := strings.CutPrefix(path, "/")
	id, isMCP := strings.CutSuffix(rest, "/mcp")
	if !ok || !isMCP || !mcpgate.ValidAgentID(id) {
		return ""
	}
	return s.agentURL(id)
}
