package ui

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// agentPage is what an agent's page shows.
type agentPage struct {
	Agent  *mcpgate.Agent
	MCPURL string
	Config string
	Skills []skillRow
	Tools  []toolRow
}

// skillRow is one skill with its upstream's health (mcp skills only).
type skillRow struct {
	*mcpgate.Skill
	Health *mcpgate.SkillHealth
}

// toolRow is one tool as the agent serves it.
type toolRow struct {
	Name, Skill, Description string
	Input, Output            json.RawMessage
}

// agentDetail shows one agent: its MCP switch, URL and client config, its
// skills and its tools.
func (h *Handler) agentDetail(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	a, err := h.agent(r.Context(), u, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	skills, err := h.skillRows(r.Context(), a.ID)
	if err != nil {
		return "", nil, err
	}
	url := h.mcpURL(a.ID)
	p := &agentPage{Agent: a, MCPURL: url, Config: clientConfig(a.ID, url), Skills: skills, Tools: h.toolRows(a.ID)}
	return "agent", &view{Title: "Agent " + a.ID, Nav: "agents", Data: p}, nil
}

// skillRows returns an agent's skills with their health.
func (h *Handler) skillRows(ctx context.Context, agentID string) ([]skillRow, error) {
	skills, err := h.opts.Store.ListSkills(ctx, agentID)
	if err != nil {
		return nil, err
	}
	health, err := h.opts.Store.ListSkillHealth(ctx, agentID)
	if err != nil {
		return nil, err
	}
	byName := map[string]*mcpgate.SkillHealth{}
	for _, s := range health {
		byName[s.Skill] = s
	}
	rows := make([]skillRow, len(skills))
	for i, s := range skills {
		rows[i] = skillRow{Skill: s, Health: byName[s.Name]}
	}
	return rows, nil
}

// toolRows returns the tools the registry serves for the agent (none
// when the agent has no table, such as a disabled one).
func (h *Handler) toolRows(agentID string) []toolRow {
	if h.opts.Tables == nil {
		return nil
	}
	t, ok := h.opts.Tables.Table(agentID)
	if !ok {
		return nil
	}
	rows := make([]toolRow, len(t.Tools))
	for i, e := range t.Tools {
		rows[i] = toolRow{Name: e.Name, Skill: e.Skill.Name, Description: e.Tool.Description, Input: e.Tool.InputSchema, Output: e.Tool.OutputSchema}
	}
	return rows
}
