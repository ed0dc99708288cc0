package mcpgate

import (
	"context"
	"encoding/json"
	"time"
)

// ApprovalState is where an approval stands.
type ApprovalState string

// The states of an approval. Pending is the only one that changes, once.
const (
	ApprovalPending   ApprovalState = "pending"
	ApprovalApproved  ApprovalState = "approved"
	ApprovalRejected  ApprovalState = "rejected"
	ApprovalExpired   ApprovalState = "expired"   // no decision before the deadline
	ApprovalWithdrawn ApprovalState = "withdrawn" // the caller canceled the call
)

// Valid reports whether s is one of the states.
func (s ApprovalState) Valid() bool {
	switch s {
	case ApprovalPending, ApprovalApproved, ApprovalRejected, ApprovalExpired, ApprovalWithdrawn:
		return true
	}
	return false
}

// Approval is a gated call waiting for, or decided by, a reviewer. It is
// bound to the exact call: the backend runs only after an approve of this
// row, with these Arguments.
type Approval struct {
	ID      string `json:"id"`
	AgentID string `json:"agent_id"`
	Skill   string `json:"skill"`
	Tool    string `json:"tool"`
	// Arguments are the call's arguments in canonical form (CanonicalJSON)
	// and ArgsHash their HashArguments.
	Arguments json.RawMessage `json:"arguments"`
	ArgsHash  string          `json:"args_hash"`
	// Identity, UserID, CredentialKind and CredentialID name the caller
	// (see Caller).
	Identity       string         `json:"identity"`
	UserID         string         `json:"user_id,omitempty"`
	CredentialKind CredentialKind `json:"credential_kind,omitempty"`
	CredentialID   string         `json:"credential_id,omitempty"`
	SessionID      string         `json:"session_id,omitempty"`
	// IdempotencyKey, when the call had one, lets a retry of the call
	// attach to this approval instead of asking again.
	IdempotencyKey string        `json:"idempotency_key,omitempty"`
	State          ApprovalState `json:"state"`
	RequestedAt    time.Time     `json:"requested_at"`
	Deadline       time.Time     `json:"deadline"`
	// Reviewer (a user's ID), Reason and DecidedAt are set by the decision.
	Reviewer  string    `json:"reviewer,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// ApprovalFilter selects approvals; empty fields select all.
type ApprovalFilter struct {
	State   ApprovalState
	AgentID string
	// OwnerID keeps the approvals of agents the user owns.
	OwnerID string
	Limit   int // 0 means 100; at most 1000
}

// Decision is a reviewer's answer to an approval, or the gateway's
// (expired, withdrawn), applied by ApprovalStore.DecideApproval.
type Decision struct {
	State    ApprovalState
	Reviewer string
	Reason   string
	At       time.Time
}

// ApprovalStore keeps approvals.
type ApprovalStore interface {
	// CreateApproval stores a, pending, setting its ID when empty.
	CreateApproval(ctx context.Context, a *Approval) error
	// FindApproval returns one approval; ENOTFOUND if unknown.
	FindApproval(ctx context.Context, id string) (*Approval, error)
	// FindApprovalByKey returns the newest approval of a call with an
	// idempotency key, in the scope of its caller identity and agent;
	// ENOTFOUND if none.
	FindApprovalByKey(ctx context.Context, identity, agentID, key string) (*Approval, error)
	// ListApprovals returns the approvals f selects, newest first.
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]*Approval, error)
	// ListReviewableApprovals returns the approvals f selects that user
	// userID may decide as a reviewer, newest first: those of the agents
	// it owns and those of the skills that name it among their Approvers.
	// It knows nothing of admins, who may decide every approval
	// (ListApprovals); an unknown user has none.
	ListReviewableApprovals(ctx context.Context, userID string, f ApprovalFilter) ([]*Approval, error)
	// DecideApproval moves a pending approval to d.State in one
	// conditional update, so that the first decision wins on every
	// replica, and returns the decided row. ECONFLICT (with the row as it
	// stands) when it is no longer pending, ENOTFOUND when unknown.
	DecideApproval(ctx context.Context, id string, d Decision) (*Approval, error)
	// ExpireApprovals marks at most limit pending approvals whose deadline
	// is past at now as expired and returns them.
	ExpireApprovals(ctx context.Context, now time.Time, limit int) ([]*Approval, error)
}
