package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/deptest"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/registry"
)

// TestImports keeps the gateway off stores, backends, the pipeline's
// implementation and the server.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/mcp", "github.com/mcpgate/mcpgate/registry")
}

// source is a registry.Source holding two agents: crm, with a REST skill,
// and docs, with an upstream MCP server's skill.
type source struct{}

func (source) Generation(context.Context) (int64, error) { return 1, nil }

func (source) ListAgents(context.Context, mcpgate.AgentFilter) ([]*mcpgate.Agent, error) {
	return []*mcpgate.Agent{{ID: "crm", Name: "CRM", OwnerID: "alice"}, {ID: "docs", Name: "Docs", OwnerID: "alice"}}, nil
}

func (source) ListSkills(context.Context, string) ([]*mcpgate.Skill, error) {
	return []*mcpgate.Skill{
		{AgentID: "crm", Name: "api", Kind: mcpgate.SkillREST, BaseURL: "http://127.0.0.1:1", AutoApprove: true, Tools: []*mcpgate.Tool{
			{Name: "status", InputSchema: json.RawMessage(`{"type":"object"}`), Request: &mcpgate.Request{Method: "GET", Path: "/status"}},
		}},
		{AgentID: "docs", Name: "search", Kind: mcpgate.SkillMCP, URL: "http://127.0.0.1:1/mcp", AutoApprove: true},
	}, nil
}

// recorder is a Pipeline and Upstreams that keeps what it is given.
type recorder struct {
	calls    []*mcpgate.Call
	forwards []*mcpgate.Forward
}

func (r *recorder) Call(_ context.Context, c *mcpgate.Call) (*mcpgate.Result, error) {
	r.calls = append(r.calls, c)
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
}

func (r *recorder) Capabilities(agentID string) map[string]json.RawMessage {
	return map[string]json.RawMessage{"prompts": json.RawMessage(`{}`)}
}

func (r *recorder) Relay(_ context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	r.forwards = append(r.forwards, f)
	return json.RawMessage(`{"prompts":[]}`), nil
}

func newTables(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New(source{}, nil)
	if err := reg.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestGatewayServesTheRegistryAndCallsThePipeline(t *testing.T) {
	rec := &recorder{}
	g := New(&Options{Tables: newTables(t), Pipeline: rec, Upstreams: rec})
	crm, docs := &mcpgate.Agent{ID: "crm"}, &mcpgate.Agent{ID: "docs"}
	tools, err := g.ListTools(t.Context(), crm)
	if err != nil || len(tools) != 1 || tools[0].Name != "status" || len(tools[0].JSON) == 0 {
		t.Fatalf("ListTools(crm) = %+v, %v; want the one tool status, encoded", tools, err)
	}
	if _, err := g.ListTools(t.Context(), &mcpgate.Agent{ID: "nope"}); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("ListTools(unknown agent) error = %v, want ENOTFOUND", err)
	}
	for _, call := range []func(context.Context, *mcpgate.Call) (*mcpgate.Result, error){g.Call, g.CallTool} {
		if _, err := call(t.Context(), &mcpgate.Call{Agent: crm, ToolName: "status"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.calls) != 2 {
		t.Errorf("the pipeline got %d calls, want 2: Call (HandsAI) and CallTool (MCP) take the same way", len(rec.calls))
	}
	if g.MayPause(crm) || !g.MayPause(docs) {
		t.Errorf("MayPause: crm %v, docs %v; want only docs, which has an upstream MCP server", g.MayPause(crm), g.MayPause(docs))
	}
	if caps, _ := g.Capabilities(t.Context(), docs); caps["prompts"] == nil {
		t.Errorf("Capabilities = %v, want the upstreams'", caps)
	}
	if _, err := g.Relay(t.Context(), &mcpgate.Forward{Agent: docs, Method: "prompts/list"}); err != nil || len(rec.forwards) != 1 {
		t.Errorf("Relay: %v, %d forwards; want it passed to the upstreams", err, len(rec.forwards))
	}
}

func TestGatewayWithoutUpstreamsServesToolsOnly(t *testing.T) {
	g := New(&Options{Tables: newTables(t), Pipeline: &recorder{}})
	if caps, err := g.Capabilities(t.Context(), &mcpgate.Agent{ID: "docs"}); caps != nil || err != nil {
		t.Errorf("Capabilities = %v, %v; want none", caps, err)
	}
	if _, err := g.Relay(t.Context(), &mcpgate.Forward{Agent: &mcpgate.Agent{ID: "docs"}, Method: "prompts/list"}); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("Relay error = %v, want ENOTFOUND", err)
	}
}

func TestNewRefusesAnIncompleteGateway(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New without a Pipeline did not panic")
		}
	}()
	New(&Options{Tables: newTables(t)})
}

func TestGatewayFindsOneTool(t *testing.T) {
	g := New(&Options{Tables: newTables(t), Pipeline: &recorder{}})
	crm := &mcpgate.Agent{ID: "crm"}
	tools, _ := g.ListTools(t.Context(), crm)
	got, ok := g.FindTool(t.Context(), crm, "status")
	if !ok || string(got) != string(tools[0].JSON) {
		t.Errorf("FindTool(crm, status) = %s, %v; want %s", got, ok, tools[0].JSON)
	}
	for _, c := range []struct{ agent, tool string }{{"crm", "nope"}, {"nope", "status"}} {
		if _, ok := g.FindTool(t.Context(), &mcpgate.Agent{ID: c.agent}, c.tool); ok {
			t.Errorf("FindTool(%s, %s) found a tool", c.agent, c.tool)
		}
	}
}

// oneTable is a Tables serving one table, which the test swaps.
type oneTable struct{ t *registry.Table }

func (o *oneTable) Table(string) (*registry.Table, bool) { return o.t, true }

// TestListToolsOncePerTable: every page of tools/list asks for the list;
// it is built once per table (no allocation after the first), and anew
// when the registry serves a new table.
func TestListToolsOncePerTable(t *testing.T) {
	tables := &oneTable{t: &registry.Table{Tools: []*registry.Entry{{Name: "a", JSON: json.RawMessage(`{"name":"a"}`)}}}}
	g := New(&Options{Tables: tables, Pipeline: &recorder{}})
	agent := &mcpgate.Agent{ID: "crm"}
	list := func() []mcp.ListedTool {
		tools, err := g.ListTools(t.Context(), agent)
		if err != nil {
			t.Fatal(err)
		}
		return tools
	}
	if got := list(); len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("ListTools = %+v, want a", got)
	}
	if n := testing.AllocsPerRun(20, func() { list() }); n != 0 {
		t.Errorf("ListTools of an unchanged table: %v allocations, want 0", n)
	}
	tables.t = &registry.Table{Tools: []*registry.Entry{{Name: "b", JSON: json.RawMessage(`{"name":"b"}`)}}}
	if got := list(); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("ListTools after a reload = %+v, want b", got)
	}
}
