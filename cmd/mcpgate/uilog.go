package main

import (
	"cmp"
	"context"
	"slices"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ui"
)

// uiCallLog reads the audit log for the dashboard (ui.CallLog).
type uiCallLog struct {
	store interface {
		ListCalls(ctx context.Context, f mcpgate.CallFilter) ([]*mcpgate.CallRecord, string, error)
		FindCall(ctx context.Context, id string) (*mcpgate.CallRecord, error)
	}
}

// uiCallPages bounds how many pages of 1000 one dashboard query reads.
const uiCallPages = 100

// ListCalls returns the calls f matches, newest first.
func (l uiCallLog) ListCalls(ctx context.Context, f ui.CallFilter) ([]*ui.CallRecord, error) {
	limit := cmp.Or(f.Limit, 100)
	var out []*ui.CallRecord
	err := l.each(ctx, f, func(c *mcpgate.CallRecord) bool {
		out = append(out, uiCall(c))
		return len(out) < limit
	})
	slices.SortStableFunc(out, func(a, b *ui.CallRecord) int { return b.StartedAt.Compare(a.StartedAt) })
	return out[:min(len(out), limit)], err
}

// CountCalls returns how many calls f matches, ignoring its Limit.
func (l uiCallLog) CountCalls(ctx context.Context, f ui.CallFilter) (int, error) {
	n := 0
	err := l.each(ctx, f, func(*mcpgate.CallRecord) bool { n++; return true })
	return n, err
}

// FindCall returns one call; ENOTFOUND if unknown.
func (l uiCallLog) FindCall(ctx context.Context, id string) (*ui.CallRecord, error) {
	c, err := l.store.FindCall(ctx, id)
	if err != nil {
		return nil, err
	}
	return uiCall(c), nil
}

// each calls fn with every call f matches, agent by agent, newest first
// within each, until fn returns false. AgentIDs nil means every agent;
// empty, none.
func (l uiCallLog) each(ctx context.Context, f ui.CallFilter, fn func(*mcpgate.CallRecord) bool) error {
	agents := []string{f.AgentID}
	switch {
	case f.AgentIDs == nil:
	case f.AgentID != "" && !slices.Contains(f.AgentIDs, f.AgentID):
		return nil
	case f.AgentID == "":
		agents = f.AgentIDs
	}
	for _, agent := range agents {
		more, err := l.eachOf(ctx, mcpgate.CallFilter{AgentID: agent, Tool: f.Tool, Since: f.Since, Limit: 1000}, f.Status, fn)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// eachOf pages through one store query; more is false when fn stopped.
func (l uiCallLog) eachOf(ctx context.Context, q mcpgate.CallFilter, status string, fn func(*mcpgate.CallRecord) bool) (more bool, err error) {
	for range uiCallPages {
		calls, next, err := l.store.ListCalls(ctx, q)
		if err != nil {
			return false, err
		}
		for _, c := range calls {
			if (status == "" || callStatus(c) == status) && !fn(c) {
				return false, nil
			}
		}
		if next == "" {
			break
		}
		q.Cursor = next
	}
	return true, nil
}

// uiCall converts an audit record for the dashboard, which keeps no
// results.
func uiCall(c *mcpgate.CallRecord) *ui.CallRecord {
	caller := string(c.CredentialKind) + ":" + c.CredentialID
	if c.UserID != "" {
		caller = "user:" + c.UserID
	}
	return &ui.CallRecord{ID: c.ID, AgentID: c.AgentID, Tool: c.Tool, Caller: caller, Status: callStatus(c),
		Error: cmp.Or(c.Error, errorOutcomeText(c.Outcome)), Arguments: c.Arguments, StartedAt: c.Time, Duration: c.Duration}
}

// callStatus is "ok" for a call that ran or was replayed, "error" for any
// other outcome.
func callStatus(c *mcpgate.CallRecord) string {
	if c.Outcome == mcpgate.OutcomeOK || c.Outcome == mcpgate.OutcomeReplayed {
		return "ok"
	}
	return "error"
}

// errorOutcomeText names a failed call's outcome when it has no error text.
func errorOutcomeText(outcome string) string {
	if outcome == mcpgate.OutcomeOK || outcome == mcpgate.OutcomeReplayed {
		return ""
	}
	return outcome
}

// uiApprovals lists and decides pending approvals for the dashboard
// (ui.ApprovalLister).
type uiApprovals struct {
	store   mcpgate.ApprovalStore
	decider *approvalDecider
}

// CountPendingApprovals returns how many approvals of the agents are
// pending; agentIDs nil means every agent's.
func (u uiApprovals) CountPendingApprovals(ctx context.Context, agentIDs []string) (int, error) {
	list, err := u.ListPendingApprovals(ctx, agentIDs)
	return len(list), err
}

// ListPendingApprovals returns the pending approvals of the agents
// (agentIDs nil means every agent's), the nearest deadline first.
func (u uiApprovals) ListPendingApprovals(ctx context.Context, agentIDs []string) ([]*mcpgate.Approval, error) {
	list, err := u.store.ListApprovals(ctx, mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending, Limit: 1000})
	if err != nil {
		return nil, err
	}
	list = slices.DeleteFunc(list, func(a *mcpgate.Approval) bool {
		return agentIDs != nil && !slices.Contains(agentIDs, a.AgentID)
	})
	slices.SortStableFunc(list, func(a, b *mcpgate.Approval) int { return a.Deadline.Compare(b.Deadline) })
	return list, nil
}

// DecideApproval records a decision once and wakes the waiting call.
func (u uiApprovals) DecideApproval(ctx context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error) {
	return u.decider.Decide(ctx, id, d)
}
