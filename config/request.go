package config

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"go.yaml.in/yaml/v3"
)

// requestFields are the fields of a tool's request.
var requestFields = []string{"method", "path", "url", "query", "headers", "body", "timeout"}

// methods are the HTTP methods a request may use.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// request reads a rest tool's request template.
func (d *decoder) request(tf *fields, s *mcpgate.Skill) *mcpgate.Request {
	if !tf.has("request") {
		d.errorf(tf.lineNode("request"), tf.field("request"), "is required: the HTTP request the tool makes (kind rest)")
		return nil
	}
	f := d.fields(tf.vals["request"], tf.field("request"), requestFields)
	if f == nil {
		return nil
	}
	r := &mcpgate.Request{
		Method:  d.method(f),
		Path:    d.str(f, "path"),
		URL:     d.str(f, "url"),
		Timeout: d.duration(f, "timeout"),
	}
	d.target(f, s, r)
	var at map[string]*yaml.Node
	r.Query, at = d.stringMap(f, "query")
	d.checkQuery(f.field("query"), r.Query, at)
	r.Headers, at = d.stringMap(f, "headers")
	d.checkHeaders(f.field("headers"), r.Headers, at)
	r.Body = d.body(f)
	return r
}

// method reads a request's method, GET when absent.
func (d *decoder) method(f *fields) string {
	m := strings.ToUpper(d.str(f, "method"))
	if m == "" {
		return "GET"
	}
	if !slices.Contains(methods, m) {
		d.errorf(f.keys["method"], f.field("method"), "%q is not one of %s", m, strings.Join(methods, ", "))
	}
	return m
}

// target checks where the request goes: a path under the skill's base_url,
// or an absolute url.
func (d *decoder) target(f *fields, s *mcpgate.Skill, r *mcpgate.Request) {
	switch {
	case r.URL != "" && r.Path != "":
		d.errorf(f.keys["url"], f.field("url"), "set path (under the skill's base_url) or url, not both")
	case r.URL != "":
		d.checkURL(f, "url", r.URL, s.AllowPrivate)
	case s.BaseURL == "":
		d.errorf(f.node, f.path, "has no target: set base_url on the skill, or url on every tool's request")
	}
	if r.Path == "" {
		return
	}
	at, field := f.keys["path"], f.field("path")
	switch {
	case !strings.HasPrefix(r.Path, "/"):
		d.errorf(at, field, "%q must start with /", r.Path)
	case strings.ContainsAny(r.Path, "?#"):
		d.errorf(at, field, "%q must not hold a query or fragment; put query parameters under query", r.Path)
	default:
		d.refuseSecretRef(at, field, r.Path)
	}
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
			d.errorf(at, field, "%q: use all, none, \"{name}\" (one argument as the whole body), a list of argument names or a mapping as a template", n.Value)
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
	if mcpgate.HasSecretRef(string(raw)) {
		d.errorf(at, field, "%s", notExpanded)
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
