package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/mcpgate/mcpgate/rest"
	"go.yaml.in/yaml/v3"
)

// jsonPath is the place of a value within a converted document, built
// into text only when a problem is reported there.
type jsonPath struct {
	parent *jsonPath
	field  string // the root's field, or a key
	index  int    // an index in a sequence when field is ""
}

// String returns the path as a field, such as "input_schema.items[0]".
func (p *jsonPath) String() string {
	switch {
	case p.parent == nil:
		return p.field
	case p.field != "":
		return p.parent.String() + "." + p.field
	}
	return fmt.Sprintf("%s[%d]", p.parent, p.index)
}

// jsonError is a problem converting YAML to JSON, at a node and a field.
type jsonError struct {
	node  *yaml.Node
	field string
	msg   string
}

// newJSONError returns a problem at n.
func newJSONError(n *yaml.Node, p *jsonPath, format string, args ...any) *jsonError {
	return &jsonError{node: n, field: p.String(), msg: fmt.Sprintf(format, args...)}
}

// Bounds of a converted value, so that nested aliases cannot build an
// unbounded document.
const (
	maxJSONDepth = 64
	maxJSONBytes = 1 << 20
)

// toJSON converts the YAML value n to JSON text, keeping the order of
// mapping keys. Field is the path of n, for errors.
func toJSON(n *yaml.Node, field string) (json.RawMessage, *jsonError) {
	var buf bytes.Buffer
	if err := writeJSONValue(&buf, n, &jsonPath{field: field}, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeJSONValue writes n as JSON.
func writeJSONValue(buf *bytes.Buffer, n *yaml.Node, p *jsonPath, depth int) *jsonError {
	if depth > maxJSONDepth {
		return newJSONError(n, p, "nests deeper than %d levels", maxJSONDepth)
	}
	if buf.Len() > maxJSONBytes {
		return newJSONError(n, p, "is larger than %d bytes as JSON", maxJSONBytes)
	}
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return writeJSONObject(buf, n, p, depth)
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSONValue(buf, item, &jsonPath{parent: p, index: i}, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeJSONScalar(buf, n, p)
	}
	return newJSONError(n, p, "is not a JSON value")
}

// writeJSONObject writes a mapping as a JSON object.
func writeJSONObject(buf *bytes.Buffer, n *yaml.Node, p *jsonPath, depth int) *jsonError {
	buf.WriteByte('{')
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		sub := &jsonPath{parent: p, field: k.Value}
		switch {
		case k.Kind != yaml.ScalarNode:
			return newJSONError(k, p, "a key must be text")
		case k.ShortTag() == "!!merge":
			return newJSONError(k, p, "YAML merge keys (<<) are not supported; write the fields out")
		case seen[k.Value]:
			return newJSONError(k, sub, "is set twice")
		}
		seen[k.Value] = true
		if i > 0 {
			buf.WriteByte(',')
		}
		rest.WriteJSONString(buf, k.Value)
		buf.WriteByte(':')
		if err := writeJSONValue(buf, n.Content[i+1], sub, depth+1); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// writeJSONScalar writes a scalar by its YAML type: null, boolean, number
// or string. Timestamps stay strings.
func writeJSONScalar(buf *bytes.Buffer, n *yaml.Node, p *jsonPath) *jsonError {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
		return nil
	case "!!bool", "!!int", "!!float":
		return writeJSONNumberOrBool(buf, n, p)
	case "!!str", "!!timestamp":
		rest.WriteJSONString(buf, n.Value)
		return nil
	}
	return newJSONError(n, p, "the YAML tag %s has no JSON form", n.Tag)
}

// writeJSONNumberOrBool writes a boolean or number scalar.
func writeJSONNumberOrBool(buf *bytes.Buffer, n *yaml.Node, p *jsonPath) *jsonError {
	var v any
	if err := n.Decode(&v); err != nil {
		return newJSONError(n, p, "%q is not a valid value", n.Value)
	}
	if f, ok := v.(float64); ok {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return newJSONError(n, p, "%s is not a JSON number", n.Value)
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return newJSONError(n, p, "%q is not a JSON value", n.Value)
	}
	buf.Write(b)
	return nil
}
