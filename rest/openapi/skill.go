package openapi

import "github.com/mcpgate/mcpgate"

// Skill returns the rest skill of agentID, named name, that serves the
// imported tools: their base URL, the security schemes' headers, and
// auto_approve on. Callers set what the import cannot know (prefix,
// allow_private, source) before checking and storing it.
func (r *Result) Skill(agentID, name string) *mcpgate.Skill {
	return &mcpgate.Skill{
		AgentID: agentID, Name: name, Kind: mcpgate.SkillREST,
		BaseURL: r.BaseURL, Headers: r.Headers, AutoApprove: true, Tools: r.Tools,
	}
}
