package ui

import (
	"context"
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
	FindSkill(ctx context.Context, agentID, name string) (*mcpgate.Skill, error)
	FindApproval(ctx context.Context, id string) (*mcpgate.Approval, error)
	ListApprovals(ctx context.Context, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error)
	ListReviewableApprovals(ctx context.Context, userID string, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error)
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

// CallLog reads the audit log of tool calls (mcpgate.CallStore).
type CallLog interface {
	// ListCalls returns the calls f selects, newest first, and the cursor
	// of the next page.
	ListCalls(ctx context.Context, f mcpgate.CallFilter) ([]*mcpgate.CallRecord, string, error)
	// CountCalls returns how many calls f selects, in one query.
	CountCalls(ctx context.Context, f mcpgate.CallFilter) (int, error)
	// FindCall returns ENOTFOUND if there is no such call.
	FindCall(ctx context.Context, id string) (*mcpgate.CallRecord, error)
}

// ApprovalDecider records a reviewer's decision once (ECONFLICT, with the
// approval as decided, when it was decided already), wakes the waiting
// call on whichever replica holds it and publishes approval.decided. The
// gateway's decider in cmd/mcpgate is one.
type ApprovalDecider interface {
	Decide(ctx context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error)
}

// ApprovalEvents tells of approvals asked for and decided in this process
// (*events.Hub), so that open approvals queues update at once.
type ApprovalEvents interface {
	OnApprovalRequested(f func(a *mcpgate.Approval))
	OnApprovalDecided(f func(a *mcpgate.Approval))
}
