package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// ApprovalStore reads approvals (mcpgate.ApprovalStore); they are decided
// through an ApprovalDecider.
type ApprovalStore interface {
	FindApproval(ctx context.Context, id string) (*mcpgate.Approval, error)
	ListApprovals(ctx context.Context, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error)
	ListReviewableApprovals(ctx context.Context, userID string, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error)
}

// ApprovalDecider records a decision once (the first wins; a later one is
// ECONFLICT with the row as decided), wakes the waiting call on any
// replica and publishes approval.decided.
type ApprovalDecider interface {
	Decide(ctx context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error)
}

// handleApprovalList lists the approvals the caller may decide, newest
// first: an admin's are all of them, a user's those of the agents it owns
// or whose skill names it among its approvers. ?state, ?agent and ?limit
// narrow it.
func (s *Server) handleApprovalList(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := c.canWrite(); err != nil {
		return err
	}
	q := r.URL.Query()
	f := mcpgate.ApprovalFilter{State: mcpgate.ApprovalState(q.Get("state")), AgentID: q.Get("agent")}
	if f.State != "" && !f.State.Valid() {
		return fieldErrorf(mcpgate.EINVALID, "state", "state must be pending, approved, rejected, expired or withdrawn")
	}
	var err error
	if f.Limit, err = queryLimit(q.Get("limit")); err != nil {
		return err
	}
	list, err := s.listReviewable(r.Context(), c, f)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*mcpgate.Approval{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
	return nil
}

// handleApprovalApprove approves a pending approval.
func (s *Server) handleApprovalApprove(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.decide(w, r, c, mcpgate.ApprovalApproved)
}

// handleApprovalReject rejects a pending approval.
func (s *Server) handleApprovalReject(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.decide(w, r, c, mcpgate.ApprovalRejected)
}

// decisionInput is the body of a decision; it may be absent.
type decisionInput struct {
	// Reason is told to the caller of a rejected call.
	Reason string `json:"reason"`
}

// decide records the caller's decision on the approval in the path: 404
// for one it may not decide, 409 when it was decided already.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, c *caller, state mcpgate.ApprovalState) error {
	if s.opts.Approvals == nil {
		return mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway has no approval gate")
	}
	if err := c.canWrite(); err != nil {
		return err
	}
	id := r.PathValue("id")
	a, err := s.opts.Store.FindApproval(r.Context(), id)
	if err != nil {
		return err
	}
	if !s.canReview(r.Context(), c, a) {
		return notFound("approval", id)
	}
	var in decisionInput
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
	}
	a, err = s.opts.Approvals.Decide(r.Context(), id, mcpgate.Decision{State: state, Reviewer: c.user.Name, Reason: in.Reason})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// listReviewable lists the approvals f selects that c may decide: all for
// an admin; for a user, the store selects those of its agents and of the
// skills naming it among their approvers, so that a limit counts the
// user's approvals, not everyone's; none for an agent key.
func (s *Server) listReviewable(ctx context.Context, c *caller, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error) {
	switch {
	case c.isAdmin():
		return s.opts.Store.ListApprovals(ctx, f)
	case c.cred.Kind == mcpgate.CredentialAgentKey || c.user == nil:
		return nil, nil
	}
	return s.opts.Store.ListReviewableApprovals(ctx, c.user.ID, f)
}

// canReview reports whether c may see and decide a: admins always, the
// agent's owner, and the users its skill names among its approvers.
func (s *Server) canReview(ctx context.Context, c *caller, a *mcpgate.Approval) bool {
	if c.isAdmin() {
		return true
	}
	if c.cred.Kind == mcpgate.CredentialAgentKey || c.user == nil {
		return false
	}
	if ag, err := s.opts.Store.FindAgent(ctx, a.AgentID); err == nil && ag.OwnerID == c.user.ID {
		return true
	}
	sk, err := s.opts.Store.FindSkill(ctx, a.AgentID, a.Skill)
	return err == nil && slices.Contains(sk.Approvers, c.user.Name)
}
