package ui

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

// approvalsPage is what the approvals queue shows.
type approvalsPage struct {
	Approvals []approvalRow
	// Off is true when the gateway has no approval gate.
	Off bool
}

// approvalRow is one pending approval with the time left to decide it.
type approvalRow struct {
	*mcpgate.Approval
	Left string
}

// approvalList shows the pending approvals of the agents the user may see
// (every one for an admin), each with an approve and a reject form.
func (h *Handler) approvalList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	p := &approvalsPage{Off: h.opts.Approvals == nil}
	if !p.Off {
		list, err := h.pendingApprovals(r.Context(), u)
		if err != nil {
			return "", nil, err
		}
		for _, a := range list {
			left := max(a.Deadline.Sub(h.opts.Now()), 0).Round(time.Second)
			p.Approvals = append(p.Approvals, approvalRow{Approval: a, Left: left.String()})
		}
	}
	return "approvals", &view{Title: "Approvals", Nav: "approvals", Data: p}, nil
}

// pendingApprovals returns the pending approvals u may decide.
func (h *Handler) pendingApprovals(ctx context.Context, u *mcpgate.User) ([]*mcpgate.Approval, error) {
	ids, err := h.agentIDs(ctx, u)
	if err != nil {
		return nil, err
	}
	return h.opts.Approvals.ListPendingApprovals(ctx, ids)
}

// approvalApprove approves a pending approval: the waiting call runs.
func (h *Handler) approvalApprove(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	return h.decide(w, r, u, mcpgate.ApprovalApproved)
}

// approvalReject rejects a pending approval with the form's reason.
func (h *Handler) approvalReject(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	return h.decide(w, r, u, mcpgate.ApprovalRejected)
}

// decide records u's decision on a pending approval of an agent u may see;
// one decided already, or another's, is not found.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request, u *mcpgate.User, state mcpgate.ApprovalState) (string, *view, error) {
	if h.opts.Approvals == nil {
		return "", nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway has no approval gate")
	}
	ctx, id := r.Context(), r.PathValue("id")
	list, err := h.pendingApprovals(ctx, u)
	if err != nil {
		return "", nil, err
	}
	if !containsApproval(list, id) {
		return "", nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "approval %q is not waiting for you: it was decided already, or is not yours to decide", id)
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if _, err := h.opts.Approvals.DecideApproval(ctx, id, mcpgate.Decision{State: state, Reviewer: u.Name, Reason: reason, At: h.opts.Now()}); err != nil {
		return "", nil, err
	}
	return redirect(w, r, "/ui/approvals/")
}

// containsApproval reports whether the list holds approval id.
func containsApproval(list []*mcpgate.Approval, id string) bool {
	for _, a := range list {
		if a.ID == id {
			return true
		}
	}
	return false
}
