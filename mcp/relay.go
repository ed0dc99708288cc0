package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// Relayer is what a Gateway implements, besides tools, when its agents
// relay upstream MCP servers: resources, prompts and completions. New
// type-asserts the Gateway once; without a Relayer those methods are
// -32601.
type Relayer interface {
	// Capabilities returns the agent's capabilities besides tools and
	// logging (members such as "resources", "prompts", "completions"),
	// merged into initialize's result. A method whose member is missing is
	// -32601 for the agent's sessions. It is called at initialize and
	// before each relayed request, so it should answer from memory.
	Capabilities(ctx context.Context, agent *mcpgate.Agent) (map[string]json.RawMessage, error)
	// Relay answers resources/list, resources/templates/list,
	// resources/read, resources/subscribe, resources/unsubscribe,
	// prompts/list, prompts/get and completion/complete with the result's
	// JSON, sent as is. f.Params are the request's params as received (nil
	// when absent). An *mcpgate.RPCError is sent as is; other errors carry
	// mcpgate codes, as CallTool's do. Relay must return promptly once ctx
	// is done: the client's cancellation and the end of the session reach
	// it only through ctx.
	Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error)
}

// relayedMethods maps the methods relayed to a Relayer to the capability
// member that enables them.
var relayedMethods = map[string]string{
	"resources/list":           "resources",
	"resources/templates/list": "resources",
	"resources/read":           "resources",
	"resources/subscribe":      "resources",
	"resources/unsubscribe":    "resources",
	"prompts/list":             "prompts",
	"prompts/get":              "prompts",
	"completion/complete":      "completions",
}

// relays reports whether method goes to the Relayer.
func (s *Server) relays(method string) bool {
	_, ok := relayedMethods[method]
	return ok && s.relayer != nil
}

// runRelay runs one relayed request, as runStreamed does.
func (s *Server) runRelay(ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message, reply *callReply) (resp []byte, cancelled bool) {
	token, err := parseProgressToken(m.Params)
	if err != nil {
		reply.log.err = err
		return s.errorResponse(ls, m, err), false
	}
	return s.runRequest(ls, m, reply, token, func(ctx context.Context) ([]byte, error) {
		return s.relay(ctx, agent, cred, ls, m, reply)
	})
}

// relay checks that the agent has the method's capability and passes the
// request to the Relayer.
func (s *Server) relay(ctx context.Context, agent *mcpgate.Agent, cred *mcpgate.Credential, ls *liveSession, m *message, reply *callReply) ([]byte, error) {
	caps, err := s.relayer.Capabilities(ctx, agent)
	if err != nil {
		return nil, err
	}
	if c := caps[relayedMethods[m.method]]; c == nil || string(c) == "null" {
		return nil, methodNotFound(m.method)
	}
	f := &mcpgate.Forward{Agent: agent, Method: m.method, Params: m.Params, Caller: cred.Caller(), SessionID: ls.id, Notifier: reply, Client: reply,
		Trace: mcpgate.TraceContext{Parent: reply.traceparent, State: reply.tracestate}}
	result, err := s.relayer.Relay(ctx, f)
	if err == nil && !mcpgate.ValidJSON(result) {
		return nil, mcpgate.Errorf(mcpgate.EINTERNAL, "relay %s: the result is not valid JSON", m.method)
	}
	return result, err
}

// parseProgressToken reads params._meta.progressToken, which must be a
// string or an integer when present.
func parseProgressToken(params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Meta requestMeta `json:"_meta"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	return p.Meta.progressToken()
}

// serverCapabilities returns initialize's capabilities for agent: tools and
// logging, and the Relayer's members. A Relayer's "tools" or "logging",
// and members that are not valid JSON, are ignored.
func (s *Server) serverCapabilities(ctx context.Context, agent *mcpgate.Agent) (json.RawMessage, error) {
	if s.relayer == nil {
		return json.RawMessage(capabilities), nil
	}
	extra, err := s.relayer.Capabilities(ctx, agent)
	if err != nil {
		return nil, err
	}
	b := []byte(capabilities[:len(capabilities)-1])
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		v := extra[name]
		if name == "tools" || name == "logging" || name == "tasks" || !mcpgate.ValidJSON(v) {
			continue
		}
		b = append(b, ',')
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// methodNotFound is the error for a method the agent does not serve.
func methodNotFound(method string) error {
	return mcpgate.Errorf(mcpgate.ENOTFOUND, "Method not found: %q", method)
}
