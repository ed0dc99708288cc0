package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// bodyMode returns the request's body mode, defaulting to none for GET,
// HEAD, DELETE and OPTIONS and to all for other methods.
func bodyMode(method string, b *mcpgate.RequestBody) string {
	if b != nil && b.Mode != "" {
		return b.Mode
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodOptions:
		return mcpgate.BodyNone
	}
	return mcpgate.BodyAll
}

// body returns the JSON body for the mode, or nil for none. Call it after
// the URL and headers, whose arguments mode all leaves out.
func (e *expander) body(mode string, b *mcpgate.RequestBody) ([]byte, error) {
	switch mode {
	case mcpgate.BodyNone:
		return nil, nil
	case mcpgate.BodyAll:
		return e.object(func(name string) bool { return !slices.Contains(e.used, name) }), nil
	case mcpgate.BodyFields:
		return e.object(func(name string) bool { return slices.Contains(b.Fields, name) }), nil
	case mcpgate.BodyTemplate:
		return e.template(b.Template)
	}
	return nil, mcpgate.Errorf(mcpgate.EINVALID, "body mode %q is not one of all, none, fields, template", mode)
}

// object returns a JSON object of the arguments keep selects, by name.
func (e *expander) object(keep func(name string) bool) []byte {
	names := make([]string, 0, len(e.args))
	for name := range e.args {
		if keep(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	size := 2
	for _, name := range names {
		size += len(name) + len(e.args[name]) + 4
	}
	var buf bytes.Buffer
	buf.Grow(size)
	buf.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		WriteJSONString(&buf, name)
		buf.WriteByte(':')
		if v := e.args[name]; len(v) == 0 || v[0] == '{' || v[0] == '[' {
			json.Compact(&buf, v) // valid: the arguments were parsed
		} else {
			buf.Write(v) // a scalar is compact: an argument's JSON has no space around it
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// template fills a JSON template: a string that is exactly "{name}"
// becomes the argument's JSON value (null when absent); a string holding
// {name} among other text interpolates the argument's text.
func (e *expander) template(tpl json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(tpl) + 64)
	err := walkTemplate(tpl, &buf, func(s string, buf *bytes.Buffer) error {
		if name, ok := wholePlaceholder(s); ok {
			e.use(name)
			v, present := e.args.value(name)
			if !present {
				v = json.RawMessage("null")
			}
			return json.Compact(buf, v)
		}
		v, err := e.text(s, false)
		WriteJSONString(buf, v)
		return err
	})
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the body template is not valid JSON: %s", err)
	}
	return buf.Bytes(), nil
}
