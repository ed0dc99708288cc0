package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// toolBuilder makes the tool of one operation.
type toolBuilder struct {
	doc *Document
	op  *operation
	sec *credentials
	// in converts the input schema's parts and collects their $defs.
	in       *schemas
	props    map[string]any
	required []string
	// taken holds the argument names given out so far.
	taken map[string]bool
	req   *mcpgate.Request
}

// newTool makes op's tool, or says why it cannot.
func newTool(doc *Document, op *operation, sec *credentials) (*mcpgate.Tool, error) {
	if op.bad != nil {
		return nil, op.bad
	}
	b := &toolBuilder{
		doc: doc, op: op, sec: sec, in: newSchemas(doc),
		props: map[string]any{}, taken: map[string]bool{},
		req: &mcpgate.Request{Method: op.method},
	}
	params, err := b.parameters()
	if err != nil {
		return nil, err
	}
	if err := b.addParams(params); err != nil {
		return nil, err
	}
	if err := b.addBody(); err != nil {
		return nil, err
	}
	for k, v := range sec.query {
		b.req.Query = setValue(b.req.Query, k, v)
	}
	input, err := b.inputSchema()
	if err != nil {
		return nil, err
	}
	summary, _ := op.op["summary"].(string)
	desc, _ := op.op["description"].(string)
	title := shortTitle(summary)
	return &mcpgate.Tool{
		Name: op.name, Title: title, Description: describe(op, summary, desc),
		InputSchema: input, OutputSchema: outputSchema(doc, op.op),
		Annotations: annotate(op.method, title), Request: b.req,
	}, nil
}

// inputSchema assembles and compiles the tool's input schema.
func (b *toolBuilder) inputSchema() (json.RawMessage, error) {
	root := map[string]any{"type": "object", "properties": b.props}
	if len(b.required) > 0 {
		slices.Sort(b.required)
		root["required"] = slices.Compact(b.required)
	}
	if len(b.in.defs) > 0 {
		root["$defs"] = b.in.defs
	}
	data, err := marshal(root)
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be encoded: %v", err)
	}
	if _, err := registry.CompileSchema(data); err != nil {
		return nil, fmt.Errorf("its input schema does not compile: %s", mcpgate.ErrorMessage(err))
	}
	return data, nil
}

// addArgument adds an argument to the input schema with its description.
func (b *toolBuilder) addArgument(name string, schema any, description string, required bool) error {
	s, err := b.in.convert(schema)
	if err != nil {
		return fmt.Errorf("argument %q: %v", name, err)
	}
	if m, ok := s.(map[string]any); ok && description != "" && m["description"] == nil {
		m["description"] = description
	}
	b.props[name] = s
	b.taken[name] = true
	if required {
		b.required = append(b.required, name)
	}
	return nil
}

// marshal encodes v as compact JSON without escaping <, > and &.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// describe joins an operation's summary and description.
func describe(op *operation, summary, desc string) string {
	summary, desc = strings.TrimSpace(summary), strings.TrimSpace(desc)
	switch {
	case summary == "" && desc == "":
		return op.label()
	case desc == "":
		return summary
	case summary == "" || strings.HasPrefix(desc, summary):
		return desc
	}
	return summary + "\n\n" + desc
}

// maxTitle is the longest summary used as a title.
const maxTitle = 80

// shortTitle returns the summary when it is one short line, else "".
func shortTitle(summary string) string {
	summary = strings.TrimSpace(summary)
	if utf8.RuneCountInString(summary) > maxTitle || strings.ContainsAny(summary, "\r\n") {
		return ""
	}
	return summary
}

// annotations are MCP tool annotations.
type annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
}

// annotate returns the annotations HTTP semantics give a method: GET and
// HEAD only read, DELETE destroys, and GET, HEAD, PUT and DELETE are
// idempotent.
func annotate(method, title string) json.RawMessage {
	yes := true
	a := annotations{Title: title}
	switch method {
	case "GET", "HEAD":
		a.ReadOnlyHint, a.IdempotentHint = &yes, &yes
	case "DELETE":
		a.DestructiveHint, a.IdempotentHint = &yes, &yes
	case "PUT":
		a.IdempotentHint = &yes
	}
	if a == (annotations{}) {
		return nil
	}
	data, _ := marshal(a) // a struct of strings and bools always encodes
	return data
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
