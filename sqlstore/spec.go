package sqlstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

// encodedSkill is a skill as it is stored: the columns of its row, its spec
// (the JSON of every other field) and the JSON of each tool. Encoding is
// deterministic, so two skills are equal exactly when their encodings are.
type encodedSkill struct {
	kind, spec, source   string
	tools                []string
	createdAt, updatedAt time.Time // of a stored skill
}

// columnFields are the skill's JSON fields that have columns of their own
// (or a table, for tools) and so stay out of its spec.
func columnFields() []string {
	return []string{"agent_id", "name", "kind", "source", "tools", "created_at", "updated_at"}
}

// encodeSkill encodes sk for storage. Taking the spec from the skill's own
// JSON keeps fields added to mcpgate.Skill later without a change here.
func encodeSkill(sk *mcpgate.Skill) (*encodedSkill, error) {
	settings := *sk
	settings.Tools = nil // encoded one by one below
	b, err := json.Marshal(&settings)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: %v", sk.Name, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("skill %s: %w", sk.Name, err)
	}
	for _, f := range columnFields() {
		delete(fields, f)
	}
	spec, err := json.Marshal(fields) // sorted keys: deterministic
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", sk.Name, err)
	}
	tools, err := encodeTools(sk)
	if err != nil {
		return nil, err
	}
	return &encodedSkill{kind: string(sk.Kind), spec: string(spec), source: sk.Source, tools: tools}, nil
}

// encodeTools encodes each of the skill's tools, refusing missing and
// duplicate ones.
func encodeTools(sk *mcpgate.Skill) ([]string, error) {
	out := make([]string, len(sk.Tools))
	seen := make(map[string]bool, len(sk.Tools))
	for i, t := range sk.Tools {
		if t == nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: tools[%d] is empty", sk.Name, i)
		} else if seen[t.Name] {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: tool %q is declared twice", sk.Name, t.Name)
		}
		seen[t.Name] = true
		b, err := json.Marshal(t)
		if err != nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: tool %q: %v", sk.Name, t.Name, err)
		}
		out[i] = string(b)
	}
	return out, nil
}

// decodeSkill reads a skill's spec; the caller sets the column fields.
func decodeSkill(spec string) (*mcpgate.Skill, error) {
	var sk mcpgate.Skill
	if err := json.Unmarshal([]byte(spec), &sk); err != nil {
		return nil, fmt.Errorf("decode spec: %w", err)
	}
	return &sk, nil
}

// decodeTool reads a tool's stored JSON.
func decodeTool(spec string) (*mcpgate.Tool, error) {
	var t mcpgate.Tool
	if err := json.Unmarshal([]byte(spec), &t); err != nil {
		return nil, fmt.Errorf("decode tool: %w", err)
	}
	return &t, nil
}
