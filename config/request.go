package config

import (
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate"
	"go.yaml.in/yaml/v3"
)

// requestFields are the fields of a tool's request.
var requestFields = []string{"method", "path", "url", "query", "headers", "body", "timeout"}

// request reads a tool's request template, nil when absent.
func (d *decoder) request(tf *fields) *mcpgate.Request {
	if !tf.has("request") {
		return nil
	}
	f := d.fields(tf.vals["request"], tf.field("request"), requestFields)
	if f == nil {
		return nil
	}
	r := &mcpgate.Request{
		Method:  strings.ToUpper(d.str(f, "method")),
		Path:    d.str(f, "path"),
		URL:     d.str(f, "url"),
		Timeout: d.duration(f, "timeout"),
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	r.Query, _ = d.stringMap(f, "query")
	r.Headers, _ = d.stringMap(f, "headers")
	r.Body = d.body(f)
	return r
}

// body reads a request body: "all", "none", a list of argument names, or a
// template.
func (d *decoder) body(f *fields) *mcpgate.RequestBody {
	if !f.has("body") {
		return nil
	}
	n, at, field := resolve(f.vals["body"]), f.keys["body"], f.field("body")
	switch n.Kind {
	case yaml.ScalarNode:
		// The root type reads the short forms: all, none, "{name}".
		var b mcpgate.RequestBody
		text, _ := json.Marshal(n.Value)
		if err := b.UnmarshalJSON(text); err != nil {
			d.errorf(at, field, "%q: use all, none, multipart, \"{name}\" (one argument as the whole body), a list of argument names or a mapping as a template", n.Value)
			return nil
		}
		return &b
	case yaml.SequenceNode:
		return d.bodyFields(n, field)
	}
	raw, jerr := toJSON(n, field)
	if jerr != nil {
		d.errorf(jerr.node, jerr.field, "%s", jerr.msg)
		return nil
	}
	return &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: raw}
}

// bodyFields reads a body given as a list of argument names.
func (d *decoder) bodyFields(n *yaml.Node, field string) *mcpgate.RequestBody {
	b := &mcpgate.RequestBody{Mode: mcpgate.BodyFields, Fields: []string{}}
	for _, item := range n.Content {
		item = resolve(item)
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" || item.Value == "" {
			d.errorf(item, field, "a body list must hold argument names")
			return nil
		}
		b.Fields = append(b.Fields, item.Value)
	}
	return b
}
