package mcpgate

import (
	"slices"
	"strings"
)

// CredentialKind says how a request authenticated.
type CredentialKind string

// The kinds of credential, in the fixed order of priority.
const (
	CredentialOAuth    CredentialKind = "oauth"     // an access token from /oauth/token
	CredentialUserKey  CredentialKind = "user_key"  // oag_…
	CredentialAgentKey CredentialKind = "agent_key" // bak_…
)

// Credential is what authenticated one request.
type Credential struct {
	Kind CredentialKind
	// ID identifies the key or token.
	ID string
	// UserID is the user acting (user keys, OAuth tokens) or the owner of
	// the agent an agent key belongs to.
	UserID string
	// AgentID is the one agent an agent key may use.
	AgentID string
	// Agents are the agents an OAuth token was granted.
	Agents []string
}

// Identity names who holds the credential, for binding sessions and scoping
// rate limits: the user for user keys and tokens, the key for agent keys.
func (c *Credential) Identity() string {
	if c.Kind == CredentialAgentKey {
		return "agent_key:" + c.ID
	}
	return "user:" + c.UserID
}

// HasIdentity reports whether id is c's Identity, without building it:
// every request on a session checks it.
func (c *Credential) HasIdentity(id string) bool {
	if c.Kind == CredentialAgentKey {
		rest, ok := strings.CutPrefix(id, "agent_key:")
		return ok && rest == c.ID
	}
	rest, ok := strings.CutPrefix(id, "user:")
	return ok && rest == c.UserID
}

// Authorize returns nil if the credential may call a's tools over MCP:
// EUNAUTHORIZED when the agent is not MCP-enabled, EFORBIDDEN for an agent
// key of another agent, an agent the token was not granted, or a key or
// token issued before the agent changed owner, and ENOTFOUND
// for another user's agent, whose existence is not revealed.
func (c *Credential) Authorize(a *Agent) error {
	switch c.Kind {
	case CredentialAgentKey:
		if c.AgentID != a.ID {
			return Errorf(EFORBIDDEN, "this agent API key belongs to agent %q, not %q", c.AgentID, a.ID)
		}
		if c.UserID != a.OwnerID {
			return Errorf(EFORBIDDEN, "this agent API key was issued under the agent's previous owner; ask the owner for a new one")
		}
	case CredentialOAuth:
		if !slices.Contains(c.Agents, a.ID) {
			return Errorf(EFORBIDDEN, "this access token was not granted agent %q", a.ID)
		}
		if c.UserID != a.OwnerID {
			return Errorf(EFORBIDDEN, "this access token was granted agent %q by its previous owner; authorize again", a.ID)
		}
	default:
		if a.OwnerID != c.UserID {
			return Errorf(ENOTFOUND, "agent %q not found", a.ID)
		}
	}
	if !a.MCPEnabled {
		return Errorf(EUNAUTHORIZED, "agent %q is not MCP-enabled; set mcp_enabled: true on it", a.ID)
	}
	return nil
}
