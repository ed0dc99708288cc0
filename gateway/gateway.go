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
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
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

// FileReader reads the gateway's own files as resources: results too big
// to return whole, which a resource_link names (files.Results).
type FileReader interface {
	// ReadResource answers resources/read of uri (mcpgate.FileURI) for
	// user userID; ENOTFOUND when the file is missing or not theirs.
	ReadResource(ctx context.Context, userID, uri string) (json.RawMessage, error)
}

// Options configure a Gateway. Tables and Pipeline are required.
type Options struct {
	Tables   Tables
	Pipeline Pipeline
	// Upstreams is optional: without it, agents offer tools only.
	Upstreams Upstreams
	// Files is optional: with it, every agent offers resources, and
	// resources/read of an mcpgate.FileURI reads the caller's file.
	Files FileReader
}

// Gateway serves agents' tools, calls and relayed requests. It is safe for
// concurrent use.
type Gateway struct {
	tables    Tables
	pipeline  Pipeline
	upstreams Upstreams
	files     FileReader
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
	_ mcp.ToolFinder    = (*Gateway)(nil)
)

// New returns a Gateway. It panics without Tables or Pipeline, which is a
// wiring mistake.
func New(opts *Options) *Gateway {
	if opts == nil || opts.Tables == nil || opts.Pipeline == nil {
		panic("gateway.New: Options.Tables and Options.Pipeline are required")
	}
	return &Gateway{tables: opts.Tables, pipeline: opts.Pipeline, upstreams: opts.Upstreams, files: opts.Files}
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
// tools, which initialize advertises, and resources when the gateway
// reads its own files.
func (g *Gateway) Capabilities(ctx context.Context, agent *mcpgate.Agent) (map[string]json.RawMessage, error) {
	var caps map[string]json.RawMessage
	if g.upstreams != nil {
		caps = g.upstreams.Capabilities(agent.ID)
	}
	if g.files != nil && caps["resources"] == nil {
		caps = maps.Clone(caps)
		if caps == nil {
			caps = map[string]json.RawMessage{}
		}
		caps["resources"] = json.RawMessage(`{}`)
	}
	return caps, nil
}

// Relay passes a resources, prompts or completion request to the agent's
// upstream servers; resources/read of a file URI reads the gateway's file.
func (g *Gateway) Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	if uri, ok := fileURI(f); ok && g.files != nil {
		if f.Method != "resources/read" {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "%s is not offered for %q", f.Method, uri)
		}
		return g.files.ReadResource(ctx, f.Caller.UserID, uri)
	}
	if g.upstreams == nil {
		return noUpstream(f.Method)
	}
	return g.upstreams.Relay(ctx, f)
}

// fileURI returns the params.uri of a resources request when it names one
// of the gateway's files.
func fileURI(f *mcpgate.Forward) (string, bool) {
	if !strings.HasPrefix(f.Method, "resources/") || !bytes.Contains(f.Params, []byte(mcpgate.FileURIPrefix)) {
		return "", false
	}
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(f.Params, &p) != nil || !strings.HasPrefix(p.URI, mcpgate.FileURIPrefix) {
		return "", false
	}
	return p.URI, true
}

// noUpstream answers a relayed request of an agent without upstreams:
// empty listings (the gateway's files are not listed), else not found.
func noUpstream(method string) (json.RawMessage, error) {
	switch method {
	case "resources/list":
		return json.RawMessage(`{"resources":[]}`), nil
	case "resources/templates/list":
		return json.RawMessage(`{"resourceTemplates":[]}`), nil
	}
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "Method not found: %q", method)
}

// FindTool returns the MCP Tool JSON of one of the agent's tools, for the
// transport's checks of a 2026-07-28 call's Mcp-Param-* headers.
func (g *Gateway) FindTool(_ context.Context, agent *mcpgate.Agent, name string) (json.RawMessage, bool) {
	t, ok := g.tables.Table(agent.ID)
	if !ok {
		return nil, false
	}
	e := t.Lookup(name)
	if e == nil {
		return nil, false
	}
	return e.JSON, true
}
