package handsai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// handsAITool is one tool of the HandsAI-compatible surface: a tool of one
// of the agents a credential may use, under the name that surface shows.
type handsAITool struct {
	// name is the tool's exposed name, or "agentId.tool" when another usable
	// agent has a tool of the same name.
	name  string
	agent *mcpgate.Agent
	entry *registry.Entry
}

// qualified reports whether the tool is listed as "agentId.tool".
func (t *handsAITool) qualified() bool { return t.name != t.entry.Name }

// qualify renames the tool "agentId.tool". Agent IDs hold no dots, so the
// qualified names of different tools never meet.
func (t *handsAITool) qualify() { t.name = t.agent.ID + "." + t.entry.Name }

// listJSON returns the tool's MCP Tool object under its listed name.
func (t *handsAITool) listJSON() (json.RawMessage, error) {
	if !t.qualified() {
		return t.entry.JSON, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(t.entry.JSON, &obj); err != nil {
		return nil, fmt.Errorf("decode tool %s: %w", t.entry.Name, err)
	}
	obj["name"], _ = json.Marshal(t.name) // a string always encodes
	return json.Marshal(obj)
}

// usableHandsAITools returns every tool of every table whose agent cred may use,
// named for the HandsAI surface, in no particular order.
func usableHandsAITools(tables []*registry.Table, cred *mcpgate.Credential) []handsAITool {
	var out []handsAITool
	for _, t := range tables {
		if cred.Authorize(t.Agent) != nil {
			continue
		}
		for _, e := range t.Tools {
			out = append(out, handsAITool{name: e.Name, agent: t.Agent, entry: e})
		}
	}
	qualifyClashes(out)
	return out
}

// qualifyClashes qualifies every tool whose name another tool shares. A tool
// name may hold dots, so an unqualified name can equal a qualified one:
// then that tool is qualified too, until every name is unique.
func qualifyClashes(tools []handsAITool) {
	for {
		count := make(map[string]int, len(tools))
		for _, t := range tools {
			count[t.name]++
		}
		renamed := false
		for i := range tools {
			if count[tools[i].name] > 1 && !tools[i].qualified() {
				tools[i].qualify()
				renamed = true
			}
		}
		if !renamed {
			return
		}
	}
}

// sortHandsAITools orders tools by listed name.
func sortHandsAITools(tools []handsAITool) {
	slices.SortFunc(tools, func(a, b handsAITool) int { return strings.Compare(a.name, b.name) })
}

// resolveHandsAITool returns the tool listed under name for cred, or nil.
// The common cases are decided by looking the name up in each usable
// agent's table: a name without a dot is listed as it is exactly when one
// usable agent has such a tool (qualified names all hold a dot), and
// "agentId.tool" names that agent's tool when the tool, itself without a
// dot, clashes. Every other name is found in the whole listing.
func resolveHandsAITool(tables []*registry.Table, cred *mcpgate.Credential, name string) *handsAITool {
	agentID, tool, dotted := strings.Cut(name, ".")
	switch {
	case !dotted:
		if hs := toolHolders(tables, cred, name); len(hs) == 1 {
			return &handsAITool{name: name, agent: hs[0].Agent, entry: hs[0].Lookup(name)}
		}
		return nil
	case !strings.Contains(tool, "."):
		hs := toolHolders(tables, cred, tool)
		i := slices.IndexFunc(hs, func(t *registry.Table) bool { return t.Agent.ID == agentID })
		if len(hs) > 1 && i >= 0 {
			return &handsAITool{name: name, agent: hs[i].Agent, entry: hs[i].Lookup(tool)}
		}
	}
	return findHandsAITool(usableHandsAITools(tables, cred), name)
}

// toolHolders returns the tables of the agents cred may use that have a
// tool of the exposed name.
func toolHolders(tables []*registry.Table, cred *mcpgate.Credential, name string) []*registry.Table {
	var out []*registry.Table
	for _, t := range tables {
		if t.Lookup(name) != nil && cred.Authorize(t.Agent) == nil {
			out = append(out, t)
		}
	}
	return out
}

// findHandsAITool returns the tool listed under name, or nil.
func findHandsAITool(tools []handsAITool, name string) *handsAITool {
	for i := range tools {
		if tools[i].name == name {
			return &tools[i]
		}
	}
	return nil
}
