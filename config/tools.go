package config

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/rest"
	"go.yaml.in/yaml/v3"
)

// toolFields are the fields of an entry under tools.
var toolFields = []string{"name", "title", "description", "input_schema", "output_schema", "annotations", "request", "rate_limit"}

// annotationFields are MCP's tool annotations.
var annotationFields = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// tool reads one tool of skill s.
func (d *decoder) tool(f *fields, s *mcpgate.Skill) *mcpgate.Tool {
	t := &mcpgate.Tool{
		Name:        d.required(f, "name", "the tool's name"),
		Title:       d.str(f, "title"),
		Description: d.str(f, "description"),
		RateLimit:   d.rateLimit(f),
	}
	if t.Name != "" {
		if err := mcpgate.ValidToolName(t.Name); err != nil {
			d.errorf(f.lineNode("name"), f.field("name"), "%s", mcpgate.ErrorMessage(err))
		} else if exposed := mcpgate.ExposedName(s.Prefix, t.Name); len(exposed) > mcpgate.MaxToolNameLen {
			d.errorf(f.lineNode("name"), f.field("name"), "with the skill's prefix, %q is longer than %d characters", exposed, mcpgate.MaxToolNameLen)
		}
	}
	var props []string
	t.InputSchema, props = d.schema(f, "input_schema", true)
	t.OutputSchema, _ = d.schema(f, "output_schema", false)
	t.Annotations = d.annotations(f)
	if s.Kind == mcpgate.SkillREST {
		t.Request = d.request(f, s)
	} else if f.has("request") {
		d.errorf(f.keys["request"], f.field("request"), "only tools of kind rest skills make HTTP requests; kind %s tools are answered by the %s", s.Kind, answeredBy[s.Kind])
	}
	if t.Request != nil && t.InputSchema != nil {
		d.checkParams(f, s, t.Request, props)
	}
	return t
}

// schema reads the JSON Schema at key: an object schema that compiles. It
// returns the schema and the names of its top-level properties.
func (d *decoder) schema(f *fields, key string, required bool) (json.RawMessage, []string) {
	field := f.field(key)
	if !f.has(key) {
		if required {
			d.errorf(f.lineNode(key), field, "is required: a JSON Schema with \"type\": \"object\"")
		}
		return nil, nil
	}
	n := resolve(f.vals[key])
	if n.Kind != yaml.MappingNode {
		d.errorf(f.keys[key], field, "must be a mapping: a JSON Schema with \"type\": \"object\"")
		return nil, nil
	}
	raw, jerr := toJSON(n, field)
	if jerr != nil {
		d.errorf(jerr.node, jerr.field, "%s", jerr.msg)
		return nil, nil
	}
	var top struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &top); err != nil || top.Type != "object" {
		d.errorf(f.keys[key], field, "must have \"type\": \"object\"")
		return nil, nil
	}
	if err := d.compile(raw); err != nil {
		d.errorf(f.keys[key], field, "%s", mcpgate.ErrorMessage(err))
		return nil, nil
	}
	return raw, slices.Sorted(maps.Keys(top.Properties))
}

// compile compiles a JSON Schema, each distinct text once: shared schemas
// and aliases repeat the same one, and compiling is the costly part of a
// check.
func (d *decoder) compile(raw json.RawMessage) error {
	if err, done := d.schemas[string(raw)]; done {
		return err
	}
	if d.schemas == nil {
		d.schemas = map[string]error{}
	}
	_, err := registry.CompileSchema(raw)
	d.schemas[string(raw)] = err
	return err
}

// annotations reads a tool's MCP annotations.
func (d *decoder) annotations(f *fields) json.RawMessage {
	if !f.has("annotations") {
		return nil
	}
	af := d.fields(f.vals["annotations"], f.field("annotations"), annotationFields)
	if af == nil {
		return nil
	}
	before := len(d.errs)
	d.str(af, "title")
	for _, hint := range annotationFields[1:] {
		d.boolean(af, hint, false)
	}
	if len(d.errs) > before {
		return nil
	}
	raw, jerr := toJSON(af.node, af.path)
	if jerr != nil {
		d.errorf(jerr.node, jerr.field, "%s", jerr.msg)
		return nil
	}
	return raw
}

// checkParams reports arguments that the request, or the skill's headers,
// use but the tool's input schema does not declare.
func (d *decoder) checkParams(f *fields, s *mcpgate.Skill, req *mcpgate.Request, props []string) {
	for _, name := range rest.Params(req) {
		if !slices.Contains(props, name) {
			d.errorf(f.keys["request"], f.field("request"),
				"uses the argument %q, which is not a property of input_schema (%s)", name, listOrNone(props))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(s.Headers)) {
		for _, name := range rest.Placeholders(s.Headers[h]) {
			if !slices.Contains(props, name) {
				d.errorf(f.lineNode("input_schema"), f.field("input_schema"),
					"the skill's header %s uses the argument %q, which is not a property here (%s)", h, name, listOrNone(props))
			}
		}
	}
}

// listOrNone describes a list of property names.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "it has none"
	}
	return "it has " + strings.Join(names, ", ")
}
