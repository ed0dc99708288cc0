package rest

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgate/mcpgate"
)

// args are a call's arguments, each as the JSON it was sent as.
type args map[string]json.RawMessage

// parseArgs reads a call's arguments, which must be a JSON object; empty or
// null means no arguments.
func parseArgs(raw json.RawMessage) (args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return args{}, nil
	}
	var a args
	if raw[0] != '{' || json.Unmarshal(raw, &a) != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the arguments must be a JSON object")
	}
	return a, nil
}

// value returns the argument's JSON, or false when it is absent or null.
func (a args) value(name string) (json.RawMessage, bool) {
	v, ok := a[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// text returns the argument as text for a URL or a header: a string as is,
// anything else as its JSON text. It returns false when the argument is
// absent or null.
func (a args) text(name string) (string, bool) {
	v, ok := a.value(name)
	if !ok {
		return "", false
	}
	return jsonText(v), true
}

// list returns the argument's elements as text when it is an array, and
// the argument alone otherwise.
func (a args) list(name string) []string {
	v, ok := a.value(name)
	if !ok {
		return nil
	}
	if v[0] != '[' {
		return []string{jsonText(v)}
	}
	var elems []json.RawMessage
	if json.Unmarshal(v, &elems) != nil {
		return nil
	}
	texts := make([]string, 0, len(elems))
	for _, e := range elems {
		if string(e) != "null" {
			texts = append(texts, jsonText(e))
		}
	}
	return texts
}

// jsonText returns a JSON string's value, or any other JSON value's text,
// compacted.
func jsonText(v json.RawMessage) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0:
		return string(v[1 : len(v)-1])
	case len(v) > 0 && v[0] == '"':
		var s string
		json.Unmarshal(v, &s) // v was checked when the arguments were read
		return s
	case len(v) > 0 && (v[0] == '{' || v[0] == '['):
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			return buf.String()
		}
	}
	return string(v)
}
