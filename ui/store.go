package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// Store is what the dashboard reads and writes: the methods of
// mcpgate.Store its pages call, and no others.
type Store interface {
	FindUserByID(ctx context.Context, id string) (*mcpgate.User, error)
	ListUsers(ctx context.Context) ([]*mcpgate.User, error)
	CreateUser(ctx context.Context, u *mcpgate.User) error
	UpdateUser(ctx context.Context, u *mcpgate.User) error
	FindAgent(ctx context.Context, id string) (*mcpgate.Agent, error)
	ListAgents(ctx context.Context, f mcpgate.AgentFilter) ([]*mcpgate.Agent, error)
	UpdateAgent(ctx context.Context, a *mcpgate.Agent) error
	ListSkills(ctx context.Context, agentID string) ([]*mcpgate.Skill, error)
	ListSkillHealth(ctx context.Context, agentID string) ([]*mcpgate.SkillHealth, error)
	CreateKey(ctx context.Context, k *mcpgate.APIKey) error
	FindKey(ctx context.Context, id string) (*mcpgate.APIKey, error)
	ListKeys(ctx context.Context, f mcpgate.KeyFilter) ([]*mcpgate.APIKey, error)
	RevokeKey(ctx context.Context, id string, at time.Time) error
	FindOAuthClient(ctx context.Context, id string) (*mcpgate.OAuthClient, error)
	ListOAuthClients(ctx context.Context) ([]*mcpgate.OAuthClient, error)
	DeleteOAuthClient(ctx context.Context, id string, at time.Time) error
	ListOAuthGrants(ctx context.Context, userID string) ([]*mcpgate.OAuthGrant, error)
	RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error
}

// Sessions is the sign-in the dashboard shares with the OAuth server
// (*oauth.Server).
type Sessions interface {
	// SessionUser returns the signed-in user's ID, "" when there is none.
	SessionUser(r *http.Request) string
	// CSRFToken returns the token r's forms must carry as "csrf".
	CSRFToken(w http.ResponseWriter, r *http.Request) string
	// CheckCSRF reports whether r's form carries the right token.
	CheckCSRF(r *http.Request) bool
	// SignOut ends the browser's session.
	SignOut(w http.ResponseWriter)
}

// Tables finds an agent's tool table (*registry.Registry).
type Tables interface {
	Table(agentID string) (*registry.Table, bool)
}

// CallLog reads the audit log of tool calls. The audit log's store
// satisfies it through a small adapter in cmd/mcpgate.
type CallLog interface {
	// ListCalls returns the calls f matches, newest first.
	ListCalls(ctx context.Context, f CallFilter) ([]*CallRecord, error)
	// CountCalls returns how many calls f matches, ignoring its Limit.
	CountCalls(ctx context.Context, f CallFilter) (int, error)
	// FindCall returns ENOTFOUND if there is no such call.
	FindCall(ctx context.Context, id string) (*CallRecord, error)
}

// CallFilter narrows the calls log. Zero fields match everything.
type CallFilter struct {
	// AgentIDs limits the calls to these agents' when not nil (the agents
	// a non-admin user owns); an empty, non-nil list matches nothing.
	AgentIDs []string
	// AgentID narrows to one agent's calls (within AgentIDs).
	AgentID string
	Tool    string
	// Status is "ok" or "error".
	Status string
	Since  time.Time
	Limit  int
}

// CallRecord is one tool call of the audit log as the dashboard shows it.
type CallRecord struct {
	ID        string
	AgentID   string
	Tool      string
	Caller    string // the credential's identity, such as user:alice
	Status    string // "ok" or "error"
	Error     string
	Arguments json.RawMessage
	Result    json.RawMessage
	StartedAt time.Time
	Duration  time.Duration
}

// ApprovalLister reads and decides the approvals waiting for a decision,
// for the overview and the approvals queue. The approval gate's store and
// decider satisfy it through a small adapter in cmd/mcpgate.
type ApprovalLister interface {
	// CountPendingApprovals returns how many approvals of the agents are
	// pending; agentIDs nil means every agent's.
	CountPendingApprovals(ctx context.Context, agentIDs []string) (int, error)
	// ListPendingApprovals returns the pending approvals of the agents
	// (agentIDs nil means every agent's), the nearest deadline first.
	ListPendingApprovals(ctx context.Context, agentIDs []string) ([]*mcpgate.Approval, error)
	// DecideApproval records a decision once: ECONFLICT when the approval
	// was decided already. It wakes the waiting call.
	DecideApproval(ctx context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error)
}
