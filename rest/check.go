package rest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// Checker checks what a rest skill's tools bind to: every argument a
// request template (or a skill header) uses is a property of the tool's
// input schema, and an argument of the path or URL is required, since a
// request cannot be made without it.
type Checker struct{}

// CheckBinding returns the problems of s's request templates, with fields
// relative to the skill. Tools without a request, or whose input schema
// is not an object schema, are left to the skill's own check.
func (Checker) CheckBinding(s *mcpgate.Skill) mcpgate.Problems {
	var p mcpgate.Problems
	if s.Kind != mcpgate.SkillREST {
		return nil
	}
	for i, t := range s.Tools {
		props, required, ok := schemaNames(t.InputSchema)
		if t.Request == nil || !ok {
			continue
		}
		p.Add(fmt.Sprintf("tools[%d]", i), checkParams(s, t.Request, props, required))
	}
	return p
}

// checkParams reports arguments that the request, or the skill's headers,
// use but the tool's input schema does not declare, and path arguments it
// does not require.
func checkParams(s *mcpgate.Skill, req *mcpgate.Request, props, required []string) mcpgate.Problems {
	var p mcpgate.Problems
	for _, name := range Params(req) {
		if !slices.Contains(props, name) {
			p.Addf("request", "uses the argument %q, which is not a property of input_schema (%s)", name, listOrNone(props))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(s.Headers)) {
		for _, name := range Placeholders(s.Headers[h]) {
			if !slices.Contains(props, name) {
				p.Addf("input_schema", "the skill's header %s uses the argument %q, which is not a property here (%s)", h, name, listOrNone(props))
			}
		}
	}
	for _, f := range []struct{ field, tpl string }{{"request.path", req.Path}, {"request.url", req.URL}} {
		for _, name := range Placeholders(f.tpl) {
			if slices.Contains(props, name) && !slices.Contains(required, name) {
				p.Addf(f.field, "uses the argument %q, which input_schema does not list under required; "+
					"a call without it could not be made: add %q to required", name, name)
			}
		}
	}
	return p
}

// schemaNames returns the top-level property names of an object schema
// and those it requires, sorted; ok is false when raw is no object schema.
func schemaNames(raw json.RawMessage) (props, required []string, ok bool) {
	var top struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(raw, &top) != nil || top.Type != "object" {
		return nil, nil, false
	}
	return slices.Sorted(maps.Keys(top.Properties)), top.Required, true
}

// listOrNone describes a list of property names.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "it has none"
	}
	return "it has " + strings.Join(names, ", ")
}
