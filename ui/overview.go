package ui

import (
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
)

// overviewPage is what the overview shows. Calls and Pending are nil when
// the audit log or the approval gate is not wired.
type overviewPage struct {
	Agents  []agentRow
	Calls   *int // calls in the last hour
	Pending *int // approvals waiting for a decision
}

// overview shows the user's agents and, when known, the last hour's
// calls and the pending approvals.
func (h *Handler) overview(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	ctx := r.Context()
	agents, err := h.agents(ctx, u)
	if err != nil {
		return "", nil, err
	}
	p := &overviewPage{Agents: make([]agentRow, len(agents))}
	for i, a := range agents {
		p.Agents[i] = agentRow{Agent: a, MCPURL: h.mcpURL(a.ID)}
	}
	ids, err := h.agentIDs(ctx, u)
	if err != nil {
		return "", nil, err
	}
	if h.opts.Calls != nil {
		n, err := h.opts.Calls.CountCalls(ctx, CallFilter{AgentIDs: ids, Since: h.opts.Now().Add(-time.Hour)})
		if err != nil {
			return "", nil, err
		}
		p.Calls = &n
	}
	if h.opts.Approvals != nil {
		n, err := h.opts.Approvals.CountPendingApprovals(ctx, ids)
		if err != nil {
			return "", nil, err
		}
		p.Pending = &n
	}
	return "overview", &view{Title: "Overview", Nav: "overview", Data: p}, nil
}

// logout signs the browser out and shows the login page.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	h.opts.Sessions.SignOut(w)
	return redirect(w, r, h.loginURL("/ui/"))
}
