package server

import (
	"context"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
)

// Caller runs tool calls: the pipeline.
type Caller interface {
	Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)
}

// Gateway joins the registry and the pipeline into what the MCP server
// needs.
type Gateway struct {
	Tables Tables
	Caller Caller
}

var _ mcp.Gateway = (*Gateway)(nil)

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
