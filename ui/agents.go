package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// agents returns the agents u may see: its own, or every agent for an
// admin.
func (h *Handler) agents(ctx context.Context, u *mcpgate.User) ([]*mcpgate.Agent, error) {
	f := mcpgate.AgentFilter{OwnerID: u.ID}
	if u.Admin {
		f = mcpgate.AgentFilter{}
	}
	return h.opts.Store.ListAgents(ctx, f)
}

// agent returns the agent u may see. Another user's agent is ENOTFOUND,
// so that its existence is not revealed.
func (h *Handler) agent(ctx context.Context, u *mcpgate.User, id string) (*mcpgate.Agent, error) {
	a, err := h.opts.Store.FindAgent(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.OwnerID != u.ID && !u.Admin {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", id)
	}
	return a, nil
}

// mcpURL is an agent's MCP endpoint.
func (h *Handler) mcpURL(agentID string) string {
	return h.opts.PublicURL + "/" + agentID + "/mcp"
}

// agentRow is one agent of the list.
type agentRow struct {
	*mcpgate.Agent
	MCPURL string
}

// agentList shows the agents the user may see.
func (h *Handler) agentList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	agents, err := h.agents(r.Context(), u)
	if err != nil {
		return "", nil, err
	}
	rows := make([]agentRow, len(agents))
	for i, a := range agents {
		rows[i] = agentRow{Agent: a, MCPURL: h.mcpURL(a.ID)}
	}
	return "agents", &view{Title: "Agents", Nav: "agents", Data: rows}, nil
}

// agentMCP turns an agent's MCP endpoint on or off (field "enabled":
// "true" or "false").
func (h *Handler) agentMCP(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	a, err := h.agent(r.Context(), u, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	switch r.PostFormValue("enabled") {
	case "true":
		a.MCPEnabled = true
	case "false":
		a.MCPEnabled = false
	default:
		return "", nil, mcpgate.Errorf(mcpgate.EINVALID, "enabled must be true or false")
	}
	if err := h.opts.Store.UpdateAgent(r.Context(), a); err != nil {
		return "", nil, err
	}
	h.changed(r.Context())
	return redirect(w, r, "/ui/agents/"+a.ID+"/")
}

// clientServer is one server of an MCP client's configuration, in the
// order people read it.
type clientServer struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// clientConfig is a copy-ready MCP client configuration for an agent
// (the "mcpServers" shape most clients read), with a placeholder key.
func clientConfig(agentID, url string) string {
	cfg := map[string]any{"mcpServers": map[string]clientServer{agentID: {
		Type: "http", URL: url, Headers: map[string]string{"Authorization": "Bearer <your API key>"},
	}}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // shown in a page that escapes it, and copied as is
	enc.SetIndent("", "  ")
	_ = enc.Encode(cfg)
	return strings.TrimSpace(buf.String())
}
