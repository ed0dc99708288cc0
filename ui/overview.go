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
	if h.opts.Calls != nil {
		f := mcpgate.CallFilter{Since: h.opts.Now().Add(-time.Hour)}
		if !u.Admin {
			f.OwnerID = u.ID
		}
		n, err := h.opts.Calls.CountCalls(ctx, f)
		if err != nil {
			return "", nil, err
		}
		p.Calls = &n
	}
	if h.opts.Approvals != nil {
		list, err := h.pendingApprovals(ctx, u)
		if err != nil {
			return "", nil, err
		}
		n := len(list)
		p.Pending = &n
	}
	return "overview", &view{Title: "Overview", Nav: "overview", Data: p}, nil
}

// logout signs the browser out and shows the login page.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	h.opts.Sessions.SignOut(w)
	return redirect(w, r, h.loginURL("/ui/"))
}
