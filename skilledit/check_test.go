package skilledit_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
)

// Moved from config (TestCheckSkillKinds) with the checks themselves.
func TestCheckSkillKinds(t *testing.T) {
	t.Parallel()
	ok := []*mcpgate.Skill{
		{Name: "s", Kind: mcpgate.SkillMCP, URL: "https://mcp.example.com/mcp", AutoApprove: true,
			Tools: []*mcpgate.Tool{{Name: "discovered", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
		{Name: "a", Kind: mcpgate.SkillAgent, AutoApprove: true},
	}
	for _, sk := range ok {
		if err := skilledit.CheckSkill(sk); err != nil {
			t.Errorf("CheckSkill(%s) = %v", sk.Kind, err)
		}
	}
	bad := &mcpgate.Skill{Name: "s", Kind: mcpgate.SkillMCP, AutoApprove: true}
	if err := skilledit.CheckSkill(bad); err == nil {
		t.Error("CheckSkill accepted an mcp skill without url or command")
	}
}
