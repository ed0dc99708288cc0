package ui

import (
	"net/http"
	"net/url"

	"github.com/mcpgate/mcpgate"
)

// callsPage is what the calls log shows.
type callsPage struct {
	Off      bool // the audit log is not wired
	Filter   mcpgate.CallFilter
	Agents   []*mcpgate.Agent // for the agent filter's choice
	Outcomes []string         // for the outcome filter's choice
	Calls    []*mcpgate.CallRecord
	// Older is the link to the next page, "" on the last.
	Older string
}

// outcomes are the calls log's outcome choices.
var outcomes = []string{mcpgate.OutcomeOK, mcpgate.OutcomeToolError, mcpgate.OutcomeInvalid, mcpgate.OutcomeTimeout,
	mcpgate.OutcomeUnavailable, mcpgate.OutcomeRateLimited, mcpgate.OutcomeConflict, mcpgate.OutcomeReplayed, mcpgate.OutcomeRejected}

// callList shows the calls log of the agents the user may see, newest
// first, narrowed by the query's agent, tool and outcome, a page at a
// time.
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
	f := mcpgate.CallFilter{AgentID: q.Get("agent"), Tool: q.Get("tool"), Outcome: q.Get("outcome"), Cursor: q.Get("cursor"), Limit: 100}
	if !u.Admin {
		f.OwnerID = u.ID // another user's agent matches nothing
	}
	calls, next, err := h.opts.Calls.ListCalls(ctx, f)
	if err != nil {
		return "", nil, err
	}
	p := &callsPage{Filter: f, Agents: agents, Outcomes: outcomes, Calls: calls}
	if next != "" {
		p.Older = "/ui/calls/?" + url.Values{"agent": {f.AgentID}, "tool": {f.Tool}, "outcome": {f.Outcome}, "cursor": {next}}.Encode()
	}
	v.Data = p
	return "calls", v, nil
}

// callDetail shows one call with its arguments.
func (h *Handler) callDetail(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	if h.opts.Calls == nil {
		return "calls", &view{Title: "Calls", Nav: "calls", Data: &callsPage{Off: true}}, nil
	}
	ctx := r.Context()
	c, err := h.opts.Calls.FindCall(ctx, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	if _, err := h.agent(ctx, u, c.AgentID); err != nil {
		// Another user's agent (or one deleted since) hides its calls.
		return "", nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "call %q not found", c.ID)
	}
	return "call", &view{Title: "Call " + c.ID, Nav: "calls", Data: c}, nil
}

// callerOf names who made a call: the user, or else the credential.
func callerOf(c *mcpgate.CallRecord) string {
	if c.UserID != "" {
		return "user:" + c.UserID
	}
	if c.CredentialKind == "" {
		return ""
	}
	return string(c.CredentialKind) + ":" + c.CredentialID
}
