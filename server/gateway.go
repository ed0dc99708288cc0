package server

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
)

// Caller runs tool calls: the pipeline.
type Caller interface {
	Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)
}

// Upstreams serve what an agent's upstream MCP servers offer besides
// tools: resources, prompts and completion.
type Upstreams interface {
	// Capabilities returns the union of the agent's upstreams'
	// capabilities besides tools and logging.
	Capabilities(agentID string) map[string]json.RawMessage
	// Relay passes one request to the upstream that serves it.
	Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error)
}

// Gateway joins the registry, the pipeline and the upstream relay into
// what the MCP server needs.
type Gateway struct {
	Tables Tables
	Caller Caller
	// Upstreams is optional: without it, agents offer tools only.
	Upstreams Upstreams
}

var (
	_ mcp.Gateway       = (*Gateway)(nil)
	_ mcp.StreamPausers = (*Gateway)(nil)
)

// MayPause reports whether the agent's requests may pause their replies:
// whether it has upstream MCP servers, whose streams the relay mirrors.
func (g *Gateway) MayPause(agent *mcpgate.Agent) bool {
	t, ok := g.Tables.Table(agent.ID)
	return ok && t.Relays()
}

// ListTools returns the agent's tools in name order, encoded once.
func (g *Gateway) ListTools(ctx context.Context, agent *mcpgate.Agent) ([]mcp.ListedTool, error) {
	t, ok := g.Tables.Table(agent.ID)
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", agent.ID)
	}
	out := make([]mcp.ListedTool, len(t.Tools))
	for i, e := range t.Tools {
		out[i] = mcp.ListedTool{Name: e.Name, JSON: e.JSON}
	}
	return out, nil
}

// CallTool runs one call through the pipeline.
func (g *Gateway) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	return g.Caller.Call(ctx, call)
}

// Capabilities returns what the agent's upstream servers offer besides
// tools, which initialize advertises.
func (g *Gateway) Capabilities(ctx context.Context, agent *mcpgate.Agent) (map[string]json.RawMessage, error) {
	if g.Upstreams == nil {
		return nil, nil
	}
	return g.Upstreams.Capabilities(agent.ID), nil
}

// Relay passes a resources, prompts or completion request to the agent's
// upstream servers.
func (g *Gateway) Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	if g.Upstreams == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "Method not found: %q", f.Method)
	}
	return g.Upstreams.Relay(ctx, f)
}
