package config

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// toolFields are the fields of an entry under tools.
var toolFields = []string{"name", "title", "description", "input_schema", "output_schema", "annotations", "request", "rate_limit", "approval"}

// annotationFields are MCP's tool annotations.
var annotationFields = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// tools reads a skill's declared tools.
func (d *decoder) tools(f *fields, s *mcpgate.Skill) []*toolAt {
	var out []*toolAt
	firstLine := map[string]int{}
	for i, n := range d.seq(f, "tools") {
		tf := d.fields(n, fmt.Sprintf("%s[%d]", f.field("tools"), i), toolFields)
		if tf == nil {
			continue
		}
		t := d.tool(tf)
		if line, dup := firstLine[t.Name]; dup && t.Name != "" {
			d.errorf(tf.lineNode("name"), tf.field("name"), "tool %q is declared twice in this skill (first at line %d)", t.Name, line)
		} else {
			firstLine[t.Name] = tf.lineNode("name").Line
		}
		s.Tools = append(s.Tools, t)
		out = append(out, &toolAt{skill: s, tool: t, at: tf})
	}
	return out
}

// tool reads one tool.
func (d *decoder) tool(f *fields) *mcpgate.Tool {
	return &mcpgate.Tool{
		Name:         d.str(f, "name"),
		Title:        d.str(f, "title"),
		Description:  d.str(f, "description"),
		InputSchema:  d.jsonValue(f, "input_schema"),
		OutputSchema: d.jsonValue(f, "output_schema"),
		Annotations:  d.annotations(f),
		Request:      d.request(f),
		RateLimit:    d.rateLimit(f),
		Approval:     d.str(f, "approval"),
	}
}

// jsonValue returns the value at key as JSON, nil when absent.
func (d *decoder) jsonValue(f *fields, key string) json.RawMessage {
	if !f.has(key) {
		return nil
	}
	raw, jerr := toJSON(f.vals[key], f.field(key))
	if jerr != nil {
		d.errorf(jerr.node, jerr.field, "%s", jerr.msg)
		return nil
	}
	return raw
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
