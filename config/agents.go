package config

import (
	"fmt"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
)

// agentFields are the fields of an entry under agents.
var agentFields = []string{"id", "name", "description", "owner", "mcp_enabled", "skills"}

// agents reads the agents section.
func (d *decoder) agents(top *fields, users []*User) []*Agent {
	var out []*Agent
	firstLine := map[string]int{}
	for i, n := range d.seq(top, "agents") {
		f := d.fields(n, fmt.Sprintf("agents[%d]", i), agentFields)
		if f == nil {
			continue
		}
		a := d.agent(f)
		if a.ID != "" {
			if line, dup := firstLine[a.ID]; dup {
				d.errorf(f.lineNode("id"), f.field("id"), "agent %q is declared twice (first at line %d)", a.ID, line)
			} else {
				firstLine[a.ID] = f.lineNode("id").Line
			}
		}
		out = append(out, a)
	}
	return out
}

// agent reads one agent with its skills.
func (d *decoder) agent(f *fields) *Agent {
	a := &Agent{
		ID:          d.required(f, "id", "the agent's ID, served at /{id}/mcp"),
		Name:        d.str(f, "name"),
		Description: d.str(f, "description"),
		Owner:       d.required(f, "owner", "the name of the user who owns the agent"),
		MCPEnabled:  d.boolean(f, "mcp_enabled", false),
	}
	a.ownerAt = &Error{File: d.file, Line: f.lineNode("owner").Line, Field: f.field("owner")}
	if a.ID != "" {
		check := &mcpgate.Agent{ID: a.ID, OwnerID: "-"}
		if err := check.Validate(); err != nil {
			d.errorf(f.lineNode("id"), f.field("id"), "%s", mcpgate.ErrorMessage(err))
		}
	}
	before := len(d.errs)
	var tools []*toolAt
	a.Skills, tools = d.skills(f, a.ID)
	if len(d.errs) == before {
		d.checkToolNames(f, a, tools)
	}
	return a
}

// toolAt is a tool of an agent with where the file declares it.
type toolAt struct {
	skill *mcpgate.Skill
	tool  *mcpgate.Tool
	at    *fields
}

// checkToolNames reports two skills of one agent serving a tool under the
// same name, at the second tool, then runs the registry's own check of the
// agent's skills as a whole.
func (d *decoder) checkToolNames(f *fields, a *Agent, tools []*toolAt) {
	first := map[string]*toolAt{}
	clash := false
	for _, t := range tools {
		name := mcpgate.ExposedName(t.skill.Prefix, t.tool.Name)
		prev := first[name]
		if prev == nil {
			first[name] = t
			continue
		}
		clash = true
		d.errorf(t.at.lineNode("name"), t.at.field("name"),
			"tool name %q is served by both skill %q (line %d) and skill %q of agent %q; set a prefix on one of them",
			name, prev.skill.Name, prev.at.lineNode("name").Line, t.skill.Name, a.ID)
	}
	if clash {
		return
	}
	if err := skilledit.CheckAgent(a.Skills); err != nil {
		d.errorf(f.lineNode("skills"), f.field("skills"), "%s", mcpgate.ErrorMessage(err))
	}
}
