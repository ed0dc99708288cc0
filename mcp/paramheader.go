package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"

	"github.com/mcpgate/mcpgate"
)

// paramHeader is one tool parameter that an inputSchema mirrors into an
// HTTP header with x-mcp-header: the header's name part and the chain of
// properties keys that leads to the parameter.
type paramHeader struct {
	name string
	path []string
}

// checkParamHeaders applies the 2026-07-28 rules for Mcp-Param-{Name}
// headers (basic/transports/streamable-http, "Custom Headers from Tool
// Parameters") to a tools/call: for each parameter the tool's inputSchema
// marks with x-mcp-header and whose argument is present and not null, the
// header must be there once, hold only visible ASCII, space or tab, and
// equal the argument once its =?base64?…?= form is decoded (integers
// compared as numbers, booleans as "true" or "false"). A tool without such
// parameters costs a lookup and no decoding.
func (s *Server) checkParamHeaders(ctx context.Context, r *http.Request, agent *mcpgate.Agent, name string, params json.RawMessage) *statelessFailure {
	tool, ok := s.findTool(ctx, agent, name)
	if !ok || !bytes.Contains(tool, []byte(`"x-mcp-header"`)) {
		return nil
	}
	var t struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(tool, &t) != nil || json.Unmarshal(params, &p) != nil {
		return nil
	}
	args := decodeArguments(p.Arguments)
	for _, ph := range collectParamHeaders(t.InputSchema, nil) {
		if f := checkParamHeader(r, ph, args); f != nil {
			return f
		}
	}
	return nil
}

// ToolFinder is a Gateway that finds one tool's JSON by name without
// listing them all; with a Gateway that does not implement it, the
// Mcp-Param-* checks of 2026-07-28 search ListTools.
type ToolFinder interface {
	// FindTool returns the MCP Tool JSON of the agent's tool name, as
	// ListTools would list it; ok is false when there is none.
	FindTool(ctx context.Context, agent *mcpgate.Agent, name string) (tool json.RawMessage, ok bool)
}

// findTool returns the Tool JSON of the agent's tool name.
func (s *Server) findTool(ctx context.Context, agent *mcpgate.Agent, name string) (json.RawMessage, bool) {
	if f, ok := s.gateway.(ToolFinder); ok {
		return f.FindTool(ctx, agent, name)
	}
	tools, err := s.gateway.ListTools(ctx, agent)
	if err != nil {
		return nil, false
	}
	tools = sortedTools(tools)
	i := sort.Search(len(tools), func(i int) bool { return tools[i].Name >= name })
	if i == len(tools) || tools[i].Name != name {
		return nil, false
	}
	return tools[i].JSON, true
}

// collectParamHeaders returns the x-mcp-header parameters of a schema,
// reached through properties keys only (the only places the revision
// allows the annotation).
func collectParamHeaders(schema json.RawMessage, path []string) []paramHeader {
	var sc struct {
		Header     *string                    `json:"x-mcp-header"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil {
		return nil
	}
	var out []paramHeader
	if sc.Header != nil && len(path) > 0 {
		out = append(out, paramHeader{name: *sc.Header, path: path})
	}
	for key, sub := range sc.Properties {
		out = append(out, collectParamHeaders(sub, append(path[:len(path):len(path)], key))...)
	}
	return out
}

// decodeArguments decodes tools/call arguments keeping numbers exact.
func decodeArguments(raw json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

// checkParamHeader checks one parameter's header against its argument.
func checkParamHeader(r *http.Request, ph paramHeader, args any) *statelessFailure {
	v := args
	for _, key := range ph.path {
		obj, _ := v.(map[string]any)
		v = obj[key]
	}
	header := "Mcp-Param-" + ph.name
	if v == nil {
		return nil // absent or null: the client omits the header
	}
	hv, ok := singleHeader(r, header)
	switch {
	case !ok:
		return mismatch(fmt.Sprintf("the %s header is required, once, when arguments carry that parameter", header))
	case !headerSafe(hv):
		return mismatch(fmt.Sprintf("the %s header holds characters a header value must not", header))
	}
	hv, ok = decodeHeaderValue(hv)
	if !ok || !sameValue(hv, v) {
		return mismatch(fmt.Sprintf("%s header value %q does not match the argument", header, hv))
	}
	return nil
}

// headerSafe reports whether v holds only visible ASCII, space and tab.
func headerSafe(v string) bool {
	for i := range len(v) {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// sameValue reports whether a decoded header value represents the
// argument v: a string as is, a number numerically, a boolean as "true" or
// "false".
func sameValue(h string, v any) bool {
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case json.Number:
		a, err1 := strconv.ParseFloat(h, 64)
		b, err2 := v.Float64()
		return err1 == nil && err2 == nil && a == b
	}
	return false
}
