package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// storedOnly are the fields of a skill's JSON that the store sets and the
// file does not declare.
var storedOnly = []string{"agent_id", "source", "created_at", "updated_at"}

// skillPath is where CheckSkill's document holds the skill.
const skillPath = "agents[0].skills[0]"

// CheckSkill runs the file's checks on one skill of an agent, as if the
// file declared it, so that the CLI and the management API accept exactly
// what the file does: no auto_approve: false, secrets only
// as ${env:NAME}, URLs the SSRF guard allows, request templates whose
// arguments the input schema declares. The variables that secrets name
// need not be set: the REST backend reads them at call time. A problem is
// Errors whose fields are relative to the skill, such as
// "tools[0].request". Name clashes with the agent's other skills are
// registry.Check's job.
func CheckSkill(agentID string, s *mcpgate.Skill) error {
	skill, err := fileFields(s)
	if err != nil {
		return err
	}
	doc := map[string]any{"agents": []any{map[string]any{
		"id": agentID, "owner": "-", "skills": []any{skill},
	}}}
	return checkDocument(doc, skillPath)
}

// fileFields returns s as the file declares it: its JSON, whose fields are
// the file's, without the fields the store sets and with the tools it
// declares. A field the root type gains that the file does not know is
// thus refused as unknown, never left unchecked.
func fileFields(s *mcpgate.Skill) (map[string]json.RawMessage, error) {
	declared := *s
	declared.Tools = declaredTools(s)
	data, err := json.Marshal(&declared)
	if err != nil {
		return nil, fmt.Errorf("encode skill for checking: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("decode skill for checking: %w", err)
	}
	for _, k := range storedOnly {
		delete(fields, k)
	}
	if len(declared.Tools) == 0 {
		delete(fields, "tools")
	}
	return fields, nil
}

// declaredTools returns the tools a skill of s's kind declares: none for
// an mcp skill, whose tools are discovered.
func declaredTools(s *mcpgate.Skill) []*mcpgate.Tool {
	if s.Kind == mcpgate.SkillMCP {
		return nil
	}
	return s.Tools
}

// CheckUserName runs the file's check of a user name.
func CheckUserName(name string) error {
	if name == "" {
		return Errors{{Field: "name", Msg: "is required: the user's login name"}}
	}
	return checkDocument(map[string]any{"users": []any{map[string]string{"name": name}}}, "users[0]")
}

// checkDocument parses doc as a config file (JSON is YAML) and returns its
// problems with fields relative to under.
func checkDocument(doc any, under string) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode for checking: %w", err)
	}
	_, err = Parse("", data, anyVariableSet)
	var errs Errors
	if !errors.As(err, &errs) {
		return err
	}
	for _, e := range errs {
		e.Line = 0
		e.Field = strings.TrimPrefix(strings.TrimPrefix(e.Field, under), ".")
	}
	return errs
}

// anyVariableSet is a lookup under which every ${env:NAME} is set.
func anyVariableSet(string) (string, bool) { return "set", true }
