package registry

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

const objectSchema = `{"type":"object","properties":{"q":{"type":"string"}}}`

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		skills []*mcpgate.Skill
		code   string // "" means valid
		errHas string
	}{
		{"empty", nil, "", ""},
		{"two skills", []*mcpgate.Skill{
			newSkill("a1", "crm", "", newTool("search"), newTool("get")),
			newSkill("a1", "wiki", "", newTool("lookup")),
		}, "", ""},
		{"prefix avoids a clash", []*mcpgate.Skill{
			newSkill("a1", "crm", "", newTool("search")),
			newSkill("a1", "wiki", "wiki_", newTool("search")),
		}, "", ""},
		{"clash names both skills", []*mcpgate.Skill{
			newSkill("a1", "crm", "", newTool("search")),
			newSkill("a1", "wiki", "", newTool("search")),
		}, mcpgate.ECONFLICT, `tool name "search" is served by both skill "crm" and skill "wiki" of agent "a1"; set a prefix on one of them`},
		{"prefix makes a clash", []*mcpgate.Skill{
			newSkill("a1", "crm", "", newTool("x_search")),
			newSkill("a1", "wiki", "x_", newTool("search")),
		}, mcpgate.ECONFLICT, `tool name "x_search" is served by both skill "crm" and skill "wiki"`},
		{"invalid skill", []*mcpgate.Skill{
			{AgentID: "a1", Name: "bad skill", Kind: mcpgate.SkillREST},
		}, mcpgate.EINVALID, `skill name "bad skill"`},
		{"input schema does not compile", []*mcpgate.Skill{
			newSkill("a1", "crm", "", &mcpgate.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)}),
		}, mcpgate.EINVALID, `skill "crm": tool "t": input_schema: schema does not compile`},
		{"input schema refs a file", []*mcpgate.Skill{
			newSkill("a1", "crm", "", &mcpgate.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)}),
		}, mcpgate.EINVALID, `skill "crm": tool "t": input_schema: schema does not compile: failing loading "file:///etc/passwd"`},
		{"output schema does not compile", []*mcpgate.Skill{
			newSkill("a1", "crm", "", &mcpgate.Tool{Name: "t", InputSchema: json.RawMessage(objectSchema), OutputSchema: json.RawMessage(`{"minimum":"one"}`)}),
		}, mcpgate.EINVALID, `skill "crm": tool "t": output_schema: schema does not compile`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.skills)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			mustErrorContain(t, err, tt.code, tt.errHas)
		})
	}
}

func TestBuild(t *testing.T) {
	agent := &mcpgate.Agent{ID: "a1"}
	out := &mcpgate.Tool{Name: "get", InputSchema: json.RawMessage(objectSchema), OutputSchema: json.RawMessage(`{"type":"object"}`)}
	skills := []*mcpgate.Skill{
		newSkill("a1", "wiki", "w.", newTool("search")),
		newSkill("a1", "crm", "", newTool("search"), out),
	}
	tbl, err := build(agent, skills)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"get", "search", "w.search"}, entryNames(tbl)); diff != "" {
		t.Errorf("tools not sorted by exposed name (-want +got):\n%s", diff)
	}
	if tbl.Agent != agent {
		t.Errorf("Agent = %v, want %v", tbl.Agent, agent)
	}
	e := tbl.Lookup("w.search")
	if e == nil || e.Skill.Name != "wiki" || e.Tool.Name != "search" || e.Input == nil || e.Output != nil {
		t.Errorf("Lookup(w.search) = %+v", e)
	}
	if e := tbl.Lookup("get"); e == nil || e.Output == nil {
		t.Errorf("Lookup(get) has no output schema: %+v", e)
	}
	if e := tbl.Lookup("search-nope"); e != nil {
		t.Errorf("Lookup(unknown) = %+v, want nil", e)
	}
}

func TestDigest(t *testing.T) {
	a := &mcpgate.Agent{ID: "a1"}
	base := mustBuild(t, a, newSkill("a1", "crm", "", newTool("search")))
	tests := []struct {
		name  string
		skill *mcpgate.Skill
		same  bool
	}{
		{"identical", newSkill("a1", "crm", "", newTool("search")), true},
		{"policy only", func() *mcpgate.Skill {
			s := newSkill("a1", "crm", "", newTool("search"))
			s.Timeout = mcpgate.Duration(5e9)
			return s
		}(), true},
		{"description", func() *mcpgate.Skill {
			s := newSkill("a1", "crm", "", newTool("search"))
			s.Tools[0].Description = "Search."
			return s
		}(), false},
		{"prefix", newSkill("a1", "crm", "c_", newTool("search")), false},
		{"another tool", newSkill("a1", "crm", "", newTool("search"), newTool("get")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustBuild(t, a, tt.skill).digest == base.digest
			if got != tt.same {
				t.Errorf("digest equal = %v, want %v", got, tt.same)
			}
		})
	}
}

func TestEncodeTool(t *testing.T) {
	in := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name    string
		tool    *mcpgate.Tool
		relayed bool
		want    string
	}{
		{"minimal", &mcpgate.Tool{Name: "t", InputSchema: in}, false,
			`{"name":"p_t","inputSchema":{"type":"object"}}`},
		{"title stands in for description", &mcpgate.Tool{Name: "t", Title: "Find", InputSchema: in}, false,
			`{"name":"p_t","title":"Find","description":"Find","inputSchema":{"type":"object"}}`},
		{"relayed tool keeps no description", &mcpgate.Tool{Name: "t", Upstream: "find", Title: "Find", InputSchema: in}, true,
			`{"name":"p_t","title":"Find","inputSchema":{"type":"object"}}`},
		{"every field", &mcpgate.Tool{
			Name: "t", Title: "Find", Description: "Finds things.", InputSchema: in,
			OutputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		}, false, `{"name":"p_t","title":"Find","description":"Finds things.","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`},
		{"every field relayed", &mcpgate.Tool{
			Name: "t", Upstream: "find", Title: "Find", Description: "Finds things.", InputSchema: in,
			OutputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"readOnlyHint":true}`),
			Icons: json.RawMessage(`[{"src":"data:image/png;base64,AA=="}]`), Meta: json.RawMessage(`{"x":1}`),
		}, true, `{"name":"p_t","title":"Find","description":"Finds things.","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"icons":[{"src":"data:image/png;base64,AA=="}],"_meta":{"x":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeTool("p_t", tt.tool, tt.relayed)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("encodeTool =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// newSkill returns an auto-approved rest skill of an agent.
func newSkill(agentID, name, prefix string, tools ...*mcpgate.Tool) *mcpgate.Skill {
	return &mcpgate.Skill{AgentID: agentID, Name: name, Kind: mcpgate.SkillREST, Prefix: prefix, AutoApprove: true, Tools: tools}
}

// newTool returns a tool taking an object with one string.
func newTool(name string) *mcpgate.Tool {
	return &mcpgate.Tool{Name: name, InputSchema: json.RawMessage(objectSchema)}
}

// mustBuild builds a table or stops the test.
func mustBuild(tb testing.TB, a *mcpgate.Agent, skills ...*mcpgate.Skill) *Table {
	tb.Helper()
	t, err := build(a, skills)
	if err != nil {
		tb.Fatalf("build: %v", err)
	}
	return t
}

// A tool relayed from an upstream MCP server lists with the description
// the upstream gave it, none here; the gateway's own tools are described
// by their title when they have no description.
func TestTitleStandsInOnlyForOwnTools(t *testing.T) {
	relayedTool := newTool("find")
	relayedTool.Upstream, relayedTool.Title = "find", "Find"
	ownTool := newTool("search")
	ownTool.Title = "Search"
	up := &mcpgate.Skill{AgentID: "a1", Name: "up", Kind: mcpgate.SkillMCP, AutoApprove: true, Tools: []*mcpgate.Tool{relayedTool}}
	table := mustBuild(t, &mcpgate.Agent{ID: "a1"}, up, newSkill("a1", "crm", "", ownTool))
	got := map[string]string{}
	for _, e := range table.Tools {
		var w struct {
			Description *string `json:"description"`
		}
		if err := json.Unmarshal(e.JSON, &w); err != nil {
			t.Fatal(err)
		}
		got[e.Name] = "<none>"
		if w.Description != nil {
			got[e.Name] = *w.Description
		}
	}
	want := map[string]string{"find": "<none>", "search": "Search"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptions (-want +got):\n%s", diff)
	}
}
