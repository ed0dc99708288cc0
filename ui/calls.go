package ui

import (
	"net/http"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// callsPage is what the calls log shows.
type callsPage struct {
	Off    bool // the audit log is not wired
	Filter CallFilter
	Agents []*mcpgate.Agent // for the agent filter's choice
	Calls  []*CallRecord
}

// callList shows the calls log of the agents the user may see, newest
// first, narrowed by the query's agent, tool and status.
func (h *Handler) callList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	v := &view{Title: "Calls", Nav: "calls"}
	if h.opts.Calls == nil {
		v.Data = &callsPage{Off: true}
		return "calls", v, nil
	}
	ctx := r.Context()
	agents, err := h.agents(ctx, u)
	if err != nil {
		return "", nil, err
	}
	q := r.URL.Query()
	f := CallFilter{AgentID: q.Get("agent"), Tool: q.Get("tool"), Status: q.Get("status"), Limit: 100}
	if f.AgentIDs, err = h.agentIDs(ctx, u); err != nil {
		return "", nil, err
	}
	var calls []*CallRecord
	if f.AgentIDs == nil || f.AgentID == "" || slices.Contains(f.AgentIDs, f.AgentID) {
		// Another user's agent matches nothing, whatever the log does
		// with AgentID.
		if calls, err = h.opts.Calls.ListCalls(ctx, f); err != nil {
			return "", nil, err
		}
	}
	v.Data = &callsPage{Filter: f, Agents: agents, Calls: calls}
	return "calls", v, nil
}

// callDetail shows one call with its arguments and result.
func (h *Handler) callDetail(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	if h.opts.Calls == nil {
		return "calls", &view{Title: "Calls", Nav: "calls", Data: &callsPage{Off: true}}, nil
	}
	ctx := r.Context()
	c, err := h.opts.Calls.FindCall(ctx, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	ids, err := h.agentIDs(ctx, u)
	if err != nil {
		return "", nil, err
	}
	if ids != nil && !slices.Contains(ids, c.AgentID) {
		return "", nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "call %q not found", c.ID)
	}
	return "call", &view{Title: "Call " + c.ID, Nav: "calls", Data: c}, nil
}
