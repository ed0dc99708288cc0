package ui

import (
	"context"
	"net/http"
	"slices"
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

// approvalList shows the pending approvals the user may decide (every one
// for an admin), the nearest deadline first, each with an approve and a
// reject form.
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

// pendingApprovals returns the pending approvals u may decide, the nearest
// deadline first: an admin's are all of them; a user's those of the agents
// it owns and of the skills naming it among their approvers.
func (h *Handler) pendingApprovals(ctx context.Context, u *mcpgate.User) ([]*mcpgate.Approval, error) {
	f := mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending, Limit: 1000}
	var list []*mcpgate.Approval
	var err error
	if u.Admin {
		list, err = h.opts.Store.ListApprovals(ctx, f)
	} else {
		list, err = h.opts.Store.ListReviewableApprovals(ctx, u.ID, f)
	}
	slices.SortStableFunc(list, func(a, b *mcpgate.Approval) int { return a.Deadline.Compare(b.Deadline) })
	return list, err
}

// mayReview reports whether u may see and decide a, by the same rule as
// the management API: admins always, the agent's owner, and the users its
// skill names among its approvers.
func (h *Handler) mayReview(ctx context.Context, u *mcpgate.User, a *mcpgate.Approval) (bool, error) {
	if u.Admin {
		return true, nil
	}
	ag, err := h.opts.Store.FindAgent(ctx, a.AgentID)
	if err != nil || ag.OwnerID == u.ID {
		return err == nil, ignoreNotFound(err)
	}
	sk, err := h.opts.Store.FindSkill(ctx, a.AgentID, a.Skill)
	if err != nil {
		return false, ignoreNotFound(err)
	}
	return slices.Contains(sk.Approvers, u.Name), nil
}

// ignoreNotFound drops ENOTFOUND: what is gone is nobody's to decide.
func ignoreNotFound(err error) error {
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil
	}
	return err
}

// approvalApprove approves a pending approval: the waiting call runs.
func (h *Handler) approvalApprove(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	return h.decide(w, r, u, mcpgate.ApprovalApproved)
}

// approvalReject rejects a pending approval with the form's reason.
func (h *Handler) approvalReject(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	return h.decide(w, r, u, mcpgate.ApprovalRejected)
}

// decide records u's decision on an approval u may decide; one that is not
// u's to decide is not found, and one decided already (before the form
// came, or by a reviewer who was quicker) is a conflict that says who
// decided it and how.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request, u *mcpgate.User, state mcpgate.ApprovalState) (string, *view, error) {
	if h.opts.Approvals == nil {
		return "", nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway has no approval gate")
	}
	ctx, id := r.Context(), r.PathValue("id")
	a, err := h.opts.Store.FindApproval(ctx, id)
	if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		return "", nil, err
	}
	if ok, err := h.reviewable(ctx, u, a); err != nil {
		return "", nil, err
	} else if !ok {
		return "", nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "Approval %q is not yours to decide, or does not exist.", id)
	}
	if a.State == mcpgate.ApprovalPending {
		reason := strings.TrimSpace(r.PostFormValue("reason"))
		a, err = h.opts.Approvals.Decide(ctx, id, mcpgate.Decision{State: state, Reviewer: u.Name, Reason: reason, At: h.opts.Now()})
		if err == nil {
			return redirect(w, r, "/ui/approvals/")
		} else if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT || a == nil {
			return "", nil, err
		}
	}
	return "", nil, mcpgate.Errorf(mcpgate.ECONFLICT, "%s", decidedAlready(a))
}

// reviewable is mayReview of an approval that may be missing (nil).
func (h *Handler) reviewable(ctx context.Context, u *mcpgate.User, a *mcpgate.Approval) (bool, error) {
	if a == nil {
		return false, nil
	}
	return h.mayReview(ctx, u, a)
}

// decidedAlready tells a reviewer that its decision came too late, and
// what became of the call.
func decidedAlready(a *mcpgate.Approval) string {
	var how string
	switch a.State {
	case mcpgate.ApprovalApproved, mcpgate.ApprovalRejected:
		how = string(a.State) + " by " + a.Reviewer
	case mcpgate.ApprovalExpired:
		how = "rejected: nobody decided before its deadline"
	case mcpgate.ApprovalWithdrawn:
		how = "withdrawn by its caller"
	default:
		how = string(a.State)
	}
	at := ""
	if !a.DecidedAt.IsZero() {
		at = " at " + a.DecidedAt.UTC().Format("15:04:05 UTC")
	}
	return "Too late: the call of " + a.Tool + " on agent " + a.AgentID + " was " + how + at + " already. Your decision was not recorded."
}
