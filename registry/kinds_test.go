package registry

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// An agent skill serves its chat tool, named after the skill and described
// by the agent's card, besides the tools it declares.
func TestAgentSkillServesChatTool(t *testing.T) {
	agent := &mcpgate.Agent{ID: "a1", Name: "Analyst", Description: "Answers questions about a CSV file."}
	sk := &mcpgate.Skill{AgentID: "a1", Name: "analyst", Kind: mcpgate.SkillAgent, AutoApprove: true,
		Tools: []*mcpgate.Tool{newTool("csv_query")}}
	table := mustBuild(t, agent, sk)
	if diff := cmp.Diff([]string{"analyst", "csv_query"}, entryNames(table)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	var got map[string]any
	if err := json.Unmarshal(table.Lookup("analyst").JSON, &got); err != nil {
		t.Fatal(err)
	}
	if got["description"] != agent.Description || got["title"] != agent.Name {
		t.Errorf("chat tool = %v, want the agent's card", got)
	}
	if err := table.Lookup("analyst").Input.Validate(json.RawMessage(`{"message":"hi","context_id":"ch_1"}`)); err != nil {
		t.Errorf("chat tool refused a message: %v", err)
	}
	if err := table.Lookup("analyst").Input.Validate(json.RawMessage(`{}`)); err == nil {
		t.Error("chat tool accepted a call without a message")
	}
	clash := &mcpgate.Skill{AgentID: "a1", Name: "analyst", Kind: mcpgate.SkillAgent, AutoApprove: true,
		Tools: []*mcpgate.Tool{newTool("analyst")}}
	if err := Check([]*mcpgate.Skill{clash}); mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Errorf("Check of a declared tool named like its skill = %v, want ECONFLICT", err)
	}
}

// A relayed tool's icons and _meta reach tools/list untouched; the
// upstream's own name stays internal.
func TestRelayedToolFields(t *testing.T) {
	tool := newTool("find")
	tool.Upstream = "Find Things"
	tool.Icons = json.RawMessage(`[{"src":"https://example.com/i.png","mimeType":"image/png"}]`)
	tool.Meta = json.RawMessage(`{"vendor/x":1}`)
	sk := &mcpgate.Skill{AgentID: "a1", Name: "up", Kind: mcpgate.SkillMCP, Prefix: "up_", AutoApprove: true,
		Tools: []*mcpgate.Tool{tool}}
	table := mustBuild(t, &mcpgate.Agent{ID: "a1"}, sk)
	want := `{"name":"up_find","inputSchema":` + objectSchema +
		`,"icons":[{"src":"https://example.com/i.png","mimeType":"image/png"}],"_meta":{"vendor/x":1}}`
	if got := string(table.Lookup("up_find").JSON); got != want {
		t.Errorf("JSON = %s\nwant %s", got, want)
	}
}
