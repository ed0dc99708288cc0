package rest

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgate/mcpgate"
)

// args are a call's arguments, each as the JSON it was sent as.
type args map[string]json.RawMessage

// callArgs returns a call's arguments. It takes them from the values the
// pipeline's validate stage decoded (Call.Decoded) when every argument is
// a string, a number, a boolean or null, writing each back as JSON, so that
// the arguments are not decoded a second time; otherwise (an object or an
// array among them, whose members' order only the JSON keeps, or no
// decoded value) it parses Call.Arguments.
func callArgs(call *mcpgate.Call) (args, error) {
	if a, ok := decodedArgs(call.Decoded); ok {
		return a, nil
	}
	return parseArgs(call.Arguments)
}

// decodedArgs returns the arguments decoded as v, if v is an object of
// scalars only.
func decodedArgs(v any) (args, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	a := make(args, len(m))
	for name, val := range m {
		raw, ok := scalarJSON(val)
		if !ok {
			return nil, false
		}
		a[name] = raw
	}
	return a, true
}

// The JSON of the literals.
var (
	jsonNull  = json.RawMessage("null")
	jsonTrue  = json.RawMessage("true")
	jsonFalse = json.RawMessage("false")
)

// scalarJSON returns the JSON of a decoded string, number (json.Number),
// boolean or null; false for anything else.
func scalarJSON(v any) (json.RawMessage, bool) {
	switch v := v.(type) {
	case nil:
		return jsonNull, true
	case bool:
		if v {
			return jsonTrue, true
		}
		return jsonFalse, true
	case json.Number:
		return json.RawMessage(v), true
	case string:
		return appendJSONText(make([]byte, 0, len(v)+2), v), true
	}
	return nil, false
}

// appendJSONText appends s as a JSON string, escaping only what JSON
// requires (quote, backslash, control characters), so that a string sent
// unescaped comes out as it was sent. s must be valid UTF-8, as every
// decoded string is.
func appendJSONText(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

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
