package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/mcpgate/mcpgate"
)

// Entry is one tool as an agent serves it: its skill, its binding, its
// compiled schemas and its MCP encoding.
type Entry struct {
	// Name is the tool's exposed name (the skill's prefix and its name).
	Name   string
	Skill  *mcpgate.Skill
	Tool   *mcpgate.Tool
	Input  *Schema
	Output *Schema // nil when the tool declares no output schema
	// JSON is the tool's MCP Tool object, encoded once.
	JSON json.RawMessage
}

// Table is the tool table of one agent, sorted by exposed name.
type Table struct {
	Agent  *mcpgate.Agent
	Tools  []*Entry
	byName map[string]*Entry
	digest string
	relays bool // some skill is an upstream MCP server
}

// Lookup returns the tool with the exposed name, or nil.
func (t *Table) Lookup(name string) *Entry { return t.byName[name] }

// Relays reports whether one of the agent's skills is an upstream MCP
// server (kind mcp), with tools or without.
func (t *Table) Relays() bool { return t.relays }

// Check validates an agent's skills as a whole: each skill's fields, each
// tool's schemas (compiled), and that no two tools share an exposed name.
// A clash is ECONFLICT naming both skills; other problems are EINVALID.
func Check(skills []*mcpgate.Skill) error {
	agent := &mcpgate.Agent{}
	if len(skills) > 0 {
		agent.ID = skills[0].AgentID // so that a clash names the agent
	}
	_, err := build(agent, skills)
	return err
}

// build compiles an agent's tool table.
func build(agent *mcpgate.Agent, skills []*mcpgate.Skill) (*Table, error) {
	t := &Table{Agent: agent, byName: map[string]*Entry{}}
	for _, s := range skills {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		t.relays = t.relays || s.Kind == mcpgate.SkillMCP
		for _, tool := range servedTools(agent, s) {
			e, err := newEntry(s, tool)
			if err != nil {
				return nil, err
			}
			if prev := t.byName[e.Name]; prev != nil {
				return nil, mcpgate.Errorf(mcpgate.ECONFLICT,
					"tool name %q is served by both skill %q and skill %q of agent %q; set a prefix on one of them",
					e.Name, prev.Skill.Name, s.Name, agent.ID)
			}
			t.byName[e.Name] = e
			t.Tools = append(t.Tools, e)
		}
	}
	sort.Slice(t.Tools, func(i, j int) bool { return t.Tools[i].Name < t.Tools[j].Name })
	t.digest = digest(t)
	return t, nil
}

// servedTools returns the tools a skill serves: its own, after the chat
// tool for an agent skill.
func servedTools(agent *mcpgate.Agent, s *mcpgate.Skill) []*mcpgate.Tool {
	if s.Kind != mcpgate.SkillAgent {
		return s.Tools
	}
	return append([]*mcpgate.Tool{mcpgate.ChatTool(agent, s)}, s.Tools...)
}

// newEntry compiles one tool.
func newEntry(s *mcpgate.Skill, tool *mcpgate.Tool) (*Entry, error) {
	e := &Entry{Name: mcpgate.ExposedName(s.Prefix, tool.Name), Skill: s, Tool: tool}
	var err error
	if e.Input, err = CompileSchema(tool.InputSchema); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: tool %q: input_schema: %s", s.Name, tool.Name, mcpgate.ErrorMessage(err))
	}
	if len(tool.OutputSchema) > 0 {
		if e.Output, err = CompileSchema(tool.OutputSchema); err != nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: tool %q: output_schema: %s", s.Name, tool.Name, mcpgate.ErrorMessage(err))
		}
	}
	if e.JSON, err = encodeTool(e.Name, tool, s.Kind == mcpgate.SkillMCP); err != nil {
		return nil, err
	}
	return e, nil
}

// encodeTool encodes a tool for tools/list. A tool of the gateway's own
// without a description is described by its title, since many clients
// show only descriptions; a tool relayed from an upstream MCP server keeps
// what the upstream said, so its description stays empty.
func encodeTool(name string, t *mcpgate.Tool, relayed bool) (json.RawMessage, error) {
	desc := t.Description
	if desc == "" && !relayed {
		desc = t.Title
	}
	return json.Marshal(mcpgate.MCPTool{
		Name: name, Title: t.Title, Description: desc,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations,
		Icons: t.Icons, Meta: t.Meta,
	})
}

// digest fingerprints what tools/list shows of a table, so that a reload
// can tell which agents' lists changed.
func digest(t *Table) string {
	h := sha256.New()
	for _, e := range t.Tools {
		h.Write(e.JSON)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
