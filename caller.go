package mcpgate

// Caller is who makes a call, as the pipeline's stages and the backends
// see it: names only, nothing to authenticate or authorize with. The edge
// derives it from the request's Credential (Credential.Caller), which stays
// at the edge.
type Caller struct {
	// Identity names the caller for ownership and scoping (sessions,
	// channels, idempotency keys, rate limits): "user:<id>" for users,
	// whether by key or token, "agent_key:<id>" for agent keys. It is
	// exactly Credential.Identity, so stored channels and sessions match.
	Identity string
	// UserID is the user acting, or the owner of the agent an agent key
	// belongs to.
	UserID string
	// AgentKeyID is the ID of the agent key that made the call; "" for
	// users.
	AgentKeyID string
	// Kind says how the caller authenticated, and CredentialID which key
	// or token it was (its ID, never its secret), for the audit log.
	Kind         CredentialKind
	CredentialID string
}

// Caller returns who holds the credential, without the credential.
func (c *Credential) Caller() Caller {
	cl := Caller{Identity: c.Identity(), UserID: c.UserID, Kind: c.Kind, CredentialID: c.ID}
	if c.Kind == CredentialAgentKey {
		cl.AgentKeyID = c.ID
	}
	return cl
}
