package mcpgate

import "testing"

func TestSkillReplacing(t *testing.T) {
	found := []*Tool{{Name: "find"}}
	stored := &Skill{Name: "s", Kind: SkillMCP, Source: SourceConfig, Tools: found}
	tests := []struct {
		name      string
		next      *Skill
		wantTools int
	}{
		{"mcp without tools keeps the discovered ones", &Skill{Name: "s", Kind: SkillMCP, Source: SourceAPI}, 1},
		{"mcp with tools (discovery) replaces them", &Skill{Name: "s", Kind: SkillMCP, Tools: []*Tool{{Name: "a"}, {Name: "b"}}}, 2},
		{"another kind drops them", &Skill{Name: "s", Kind: SkillREST}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stored.Replacing(tt.next)
			if got.Source != SourceConfig || len(got.Tools) != tt.wantTools {
				t.Errorf("Replacing = source %q, %d tools; want %q, %d", got.Source, len(got.Tools), SourceConfig, tt.wantTools)
			}
			if got == tt.next {
				t.Error("Replacing changed next in place")
			}
		})
	}
}
