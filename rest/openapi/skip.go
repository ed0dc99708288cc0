package openapi

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A Skip is an operation, or a whole path item, of the document that was
// not imported, and why.
type Skip struct {
	// Operation is "METHOD /path", or "/path" for a path item that could
	// not be read at all.
	Operation string `json:"operation"`
	// Pointer is the JSON pointer to it in the document, such as
	// "/paths/~1pets/get".
	Pointer string `json:"pointer"`
	// Line is its line in a YAML document, counted from 1; 0 for JSON.
	Line int `json:"line,omitempty"`
	// Reason says why it was not imported.
	Reason string `json:"reason"`
}

// String returns the skip as "METHOD /path (pointer, line n): reason".
func (s Skip) String() string {
	at := s.Pointer
	if s.Line > 0 {
		at += fmt.Sprintf(", line %d", s.Line)
	}
	return fmt.Sprintf("%s (%s): %s", s.Operation, at, s.Reason)
}

// skip records that op was not imported, and why.
func (r *Result) skip(doc *Document, op *operation, reason error) {
	ptr := op.pointer()
	s := Skip{Operation: op.label(), Pointer: ptr, Line: doc.lines[ptr], Reason: reason.Error()}
	r.SkippedOperations = append(r.SkippedOperations, s)
	r.Skipped = append(r.Skipped, s.String())
}

// pointerToken escapes one token of a JSON pointer (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pathLines returns the lines of the path items and operations of a YAML
// document, by JSON pointer: where their keys are written.
func pathLines(doc *yaml.Node) map[string]int {
	lines := map[string]int{}
	paths := mappingValue(unalias(doc), "paths")
	forPairs(paths, func(p, item *yaml.Node) {
		ptr := "/paths/" + pointerToken(keyText(p))
		lines[ptr] = p.Line
		forPairs(item, func(m, _ *yaml.Node) {
			lines[ptr+"/"+pointerToken(keyText(m))] = m.Line
		})
	})
	return lines
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	var found *yaml.Node
	forPairs(n, func(k, v *yaml.Node) {
		if found == nil && keyText(k) == key {
			found = v
		}
	})
	return found
}

// forPairs calls fn with each key and value of a mapping node (following
// aliases; a document node stands for its content), and does nothing for
// any other node.
func forPairs(n *yaml.Node, fn func(k, v *yaml.Node)) {
	n = unalias(n)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = unalias(n.Content[0])
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

// unalias follows aliases to the node they name, within maxDepth hops.
func unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}
