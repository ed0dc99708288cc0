// Package gateway is the one way from the gateway's surfaces to the call
// pipeline: a Gateway built once joins the registry (an agent's tools), the
// pipeline (running a call) and the upstream relay (resources, prompts,
// completion), and both the MCP transport and the HandsAI-compatible
// surface hold it.
//
// It has nothing of HTTP in it. It imports the root package, mcp (the
// interfaces it implements) and registry (the tables it reads); it must not
// import a store, a backend, the pipeline's implementation or the server.
package gateway

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/registry"
)

// Tables finds an agent's tool table: the registry.
type Tables interface {
	Table(agentID string) (*registry.Table, bool)
}

// Pipeline runs tool calls through the gateway's stages.
type Pipeline interface {
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

// Options configure a Gateway. Tables and Pipeline are required.
type Options struct {
	Tables   Tables
	Pipeline Pipeline
	// Upstreams is optional: without it, agents offer tools only.
	Upstreams Upstreams
}

// Gateway serves agents' tools, calls and relayed requests. It is safe for
// concurrent use.
type Gateway struct {
	tables    Tables
	pipeline  Pipeline
	upstreams Upstreams
	listed    sync.Map // agent ID → *listing, the last table's tools/list entries
}

// listing is an agent's tools/list entries, built from one table.
type listing struct {
	table *registry.Table
	tools []mcp.ListedTool
}

var (
	_ mcp.Gateway       = (*Gateway)(nil)
	_ mcp.Relayer       = (*Gateway)(nil)
	_ mcp.StreamPausers = (*Gateway)(nil)
)

// New returns a Gateway. It panics without Tables or Pipeline, which is a
// wiring mistake.
func New(opts *Options) *Gateway {
	if opts == nil || opts.Tables == nil || opts.Pipeline == nil {
		panic("gateway.New: Options.Tables and Options.Pipeline are required")
	}
	return &Gateway{tables: opts.Tables, pipeline: opts.Pipeline, upstreams: opts.Upstreams}
}

// Call runs one tools/call through the pipeline.
func (g *Gateway) Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	return g.pipeline.Call(ctx, call)
}

// CallTool runs one tools/call through the pipeline, for the transport.
func (g *Gateway) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	return g.pipeline.Call(ctx, call)
}

// ListTools returns the agent's tools in name order, encoded once. The
// slice is built once per table (every page of tools/list asks for it)
// and shared: callers must not change it.
func (g *Gateway) ListTools(ctx context.Context, agent *mcpgate.Agent) ([]mcp.ListedTool, error) {
	t, ok := g.tables.Table(agent.ID)
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", agent.ID)
	}
	if l, ok := g.listed.Load(agent.ID); ok && l.(*listing).table == t {
		return l.(*listing).tools, nil
	}
	out := make([]mcp.ListedTool, len(t.Tools))
	for i, e := range t.Tools {
		out[i] = mcp.ListedTool{Name: e.Name, JSON: e.JSON}
	}
	g.listed.Store(agent.ID, &listing{table: t, tools: out})
	return out, nil
}

// MayPause reports whether the agent's requests may pause their replies:
// whether it has upstream MCP servers, whose streams the relay mirrors.
func (g *Gateway) MayPause(agent *mcpgate.Agent) bool {
	t, ok := g.tables.Table(agent.ID)
	return ok && t.Relays()
}

// Capabilities returns what the agent's upstream servers offer besides
// tools, which initialize advertises.
func (g *Gateway) Capabilities(ctx context.Context, agent *mcpgate.Agent) (map[string]json.RawMessage, error) {
	if g.upstreams == nil {
		return nil, nil
	}
	return g.upstreams.Capabilities(agent.ID), nil
}

// Relay passes a resources, prompts or completion request to the agent's
// upstream servers.
func (g *Gateway) Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	if g.upstreams == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "Method not found: %q", f.Method)
	}
	return g.upstreams.Relay(ctx, f)
}
