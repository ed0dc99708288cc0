package mcpgate

import "testing"

func TestCredentialAuthorize(t *testing.T) {
	agent := &Agent{ID: "inv", OwnerID: "u1", MCPEnabled: true}
	off := &Agent{ID: "inv", OwnerID: "u1"}
	tests := []struct {
		name  string
		cred  Credential
		agent *Agent
		want  string
	}{
		{"user key of the owner", Credential{Kind: CredentialUserKey, UserID: "u1"}, agent, ""},
		{"user key of another user", Credential{Kind: CredentialUserKey, UserID: "u2"}, agent, ENOTFOUND},
		{"agent key of the agent", Credential{Kind: CredentialAgentKey, UserID: "u1", AgentID: "inv"}, agent, ""},
		{"agent key of another agent", Credential{Kind: CredentialAgentKey, UserID: "u1", AgentID: "other"}, agent, EFORBIDDEN},
		{"agent key from a previous owner", Credential{Kind: CredentialAgentKey, UserID: "u0", AgentID: "inv"}, agent, EFORBIDDEN},
		{"token granted the agent", Credential{Kind: CredentialOAuth, UserID: "u1", Agents: []string{"inv"}}, agent, ""},
		{"token not granted the agent", Credential{Kind: CredentialOAuth, UserID: "u1", Agents: []string{"x"}}, agent, EFORBIDDEN},
		{"token from a previous owner", Credential{Kind: CredentialOAuth, UserID: "u0", Agents: []string{"inv"}}, agent, EFORBIDDEN},
		{"agent not MCP-enabled", Credential{Kind: CredentialUserKey, UserID: "u1"}, off, EUNAUTHORIZED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorCode(tt.cred.Authorize(tt.agent)); got != tt.want {
				t.Errorf("Authorize = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCredentialIdentity(t *testing.T) {
	user := Credential{Kind: CredentialUserKey, ID: "key_1", UserID: "u1"}
	token := Credential{Kind: CredentialOAuth, ID: "tok", UserID: "u1"}
	agentKey := Credential{Kind: CredentialAgentKey, ID: "key_2", UserID: "u1", AgentID: "inv"}
	if user.Identity() != token.Identity() || user.Identity() == agentKey.Identity() {
		t.Errorf("identities: user %q, token %q, agent key %q", user.Identity(), token.Identity(), agentKey.Identity())
	}
}

func TestCredentialCaller(t *testing.T) {
	for _, c := range []Credential{
		{Kind: CredentialUserKey, ID: "key_1", UserID: "u1"},
		{Kind: CredentialOAuth, ID: "tok", UserID: "u1", Agents: []string{"inv"}},
		{Kind: CredentialAgentKey, ID: "key_2", UserID: "u1", AgentID: "inv"},
	} {
		got := c.Caller()
		if got.Identity != c.Identity() || got.UserID != c.UserID || got.Kind != c.Kind {
			t.Errorf("%s: Caller() = %+v, want identity %q, user %q", c.Kind, got, c.Identity(), c.UserID)
		}
		if want := map[bool]string{true: c.ID}[c.Kind == CredentialAgentKey]; got.AgentKeyID != want {
			t.Errorf("%s: AgentKeyID = %q, want %q", c.Kind, got.AgentKeyID, want)
		}
	}
}

// TestHasIdentity checks HasIdentity against Identity for each kind of
// credential, and that it builds nothing.
func TestHasIdentity(t *testing.T) {
	creds := []*Credential{
		{Kind: CredentialAgentKey, ID: "k1", UserID: "u1", AgentID: "a"},
		{Kind: CredentialUserKey, ID: "k2", UserID: "u1"},
		{Kind: CredentialOAuth, ID: "t", UserID: "u2"},
	}
	ids := []string{"", "user:", "agent_key:", "user:u1", "user:u2", "agent_key:k1", "agent_key:k2", "user:k1", "agent_key:u1", "user:u1x"}
	for _, c := range creds {
		for _, id := range ids {
			if got, want := c.HasIdentity(id), c.Identity() == id; got != want {
				t.Errorf("%+v HasIdentity(%q) = %v, want %v", c, id, got, want)
			}
		}
		id := c.Identity()
		if n := testing.AllocsPerRun(100, func() { c.HasIdentity(id) }); n != 0 {
			t.Errorf("HasIdentity: %v allocations, want 0", n)
		}
	}
}
