package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate"
	"go.yaml.in/yaml/v3"
)

// Document is a parsed OpenAPI document. It is never modified after Parse,
// so one Document may be imported many times, concurrently.
type Document struct {
	// Version is the document's openapi field, such as "3.1.0".
	Version string
	// Title is the API's info.title.
	Title string
	// root holds the document as JSON values: map[string]any, []any,
	// string, json.Number, bool and nil.
	root map[string]any
	// lines maps the JSON pointers of path items and operations to their
	// lines in a YAML document; nil for JSON.
	lines map[string]int
}

// versionPattern matches the OpenAPI versions the package reads.
var versionPattern = regexp.MustCompile(`^3\.[01](\.\d+)?$`)

// Limits on what a YAML document may expand to, so that aliases cannot
// make a small document huge and nesting cannot exhaust the stack.
const (
	maxNodes = 1_000_000
	maxDepth = 1000
)

// Parse parses a document, YAML or JSON. Returns EINVALID if it is
// neither, or if it is not OpenAPI 3.0.x or 3.1.x, saying which version it
// saw.
func Parse(data []byte) (*Document, error) {
	v, lines, err := decode(data)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the document is not an OpenAPI object")
	}
	version, err := checkVersion(root)
	if err != nil {
		return nil, err
	}
	if p, ok := root["paths"]; ok && p != nil {
		if _, ok := p.(map[string]any); !ok {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "the document's paths is not an object")
		}
	}
	title, _ := object(root["info"])["title"].(string)
	return &Document{Version: version, Title: title, root: root, lines: lines}, nil
}

// checkVersion returns the document's OpenAPI version, or EINVALID saying
// which version it saw.
func checkVersion(root map[string]any) (string, error) {
	v := scalarText(root["openapi"])
	switch {
	case v == "" && root["swagger"] != nil:
		return "", mcpgate.Errorf(mcpgate.EINVALID,
			"the document is Swagger %s; only OpenAPI 3.0.x and 3.1.x can be imported (convert it first)", scalarText(root["swagger"]))
	case v == "":
		return "", mcpgate.Errorf(mcpgate.EINVALID, "the document has no openapi version field; only OpenAPI 3.0.x and 3.1.x can be imported")
	case !versionPattern.MatchString(v):
		return "", mcpgate.Errorf(mcpgate.EINVALID, "the document is OpenAPI %q; only 3.0.x and 3.1.x can be imported", v)
	}
	return v, nil
}

// scalarText returns a string or number as text, and "" for anything else.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

// decode reads JSON when the data starts with '{', YAML otherwise. For
// YAML it also returns the lines of the path items and operations.
func decode(data []byte) (any, map[string]int, error) {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		v, err := decodeJSON(trimmed)
		return v, nil, err
	}
	return decodeYAML(data)
}

// decodeJSON reads one JSON value, numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the document is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the document is not valid JSON: more than one value")
	}
	return v, nil
}

// decodeYAML reads a YAML document into JSON values, and the lines of its
// path items and operations.
func decodeYAML(data []byte) (v any, lines map[string]int, err error) {
	defer func() {
		if r := recover(); r != nil { // the parser must not take the process down
			v, lines, err = nil, nil, mcpgate.Errorf(mcpgate.EINVALID, "the document is not valid YAML")
		}
	}()
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, nil, mcpgate.Errorf(mcpgate.EINVALID, "the document is neither JSON nor valid YAML: %v", err)
	}
	c := &yamlConverter{budget: maxNodes}
	v, err = c.value(&n, 0)
	if err != nil {
		return nil, nil, mcpgate.Errorf(mcpgate.EINVALID, "the document cannot be read: %v", err)
	}
	return v, pathLines(&n), nil
}

// yamlConverter turns YAML nodes into JSON values, within a budget.
type yamlConverter struct {
	budget int
}

// value converts one node.
func (c *yamlConverter) value(n *yaml.Node, depth int) (any, error) {
	c.budget--
	if c.budget < 0 || depth > maxDepth {
		return nil, fmt.Errorf("it nests or expands too far")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return c.value(n.Alias, depth+1)
	case yaml.SequenceNode:
		return c.sequence(n, depth)
	case yaml.MappingNode:
		m := map[string]any{}
		return m, c.mapping(m, n, depth)
	}
	return scalar(n), nil
}

// sequence converts a sequence node.
func (c *yamlConverter) sequence(n *yaml.Node, depth int) ([]any, error) {
	out := make([]any, 0, len(n.Content))
	for _, e := range n.Content {
		v, err := c.value(e, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// mapping adds a mapping node's pairs to m; a merge key ("<<") adds the
// pairs of the mappings it names without overriding m's own.
func (c *yamlConverter) mapping(m map[string]any, n *yaml.Node, depth int) error {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		val, err := c.value(v, depth+1)
		if err != nil {
			return err
		}
		m[keyText(k)] = val
	}
	for _, v := range merges {
		if err := c.merge(m, v, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// merge adds the pairs of the mapping, or sequence of mappings, that a
// merge key names to m, keeping m's own values.
func (c *yamlConverter) merge(m map[string]any, n *yaml.Node, depth int) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil && depth <= maxDepth {
		n, depth = n.Alias, depth+1
	}
	srcs := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		srcs = n.Content
	}
	for _, src := range srcs {
		v, err := c.value(src, depth+1)
		if err != nil {
			return err
		}
		for k, val := range object(v) {
			if _, ok := m[k]; !ok {
				m[k] = val
			}
		}
	}
	return nil
}

// keyText returns a mapping key as text: 200 and "200" are the same key.
func keyText(k *yaml.Node) string {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	return k.Value
}

// scalar converts a scalar node by its resolved tag.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return n.Value
		}
		return b
	case "!!int", "!!float":
		return number(n.Value)
	}
	return n.Value
}

// number returns a YAML number as a json.Number, or as text when JSON
// cannot hold it (infinities, NaN).
func number(text string) any {
	if text != "" && (text[0] == '-' || ('0' <= text[0] && text[0] <= '9')) && json.Valid([]byte(text)) {
		return json.Number(text)
	}
	clean := strings.ReplaceAll(text, "_", "")
	if i, err := strconv.ParseInt(clean, 0, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10))
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return text
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// object returns v as a JSON object, or nil.
func object(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
