package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
)

// ClientRequester reaches the MCP client behind a call or request in
// flight with server→client requests: sampling/createMessage,
// elicitation/create, roots/list. The transport implements it; backends that
// relay an upstream server's requests use it.
type ClientRequester interface {
	// ClientCapabilities returns the capabilities the client declared at
	// initialize, as JSON ("{}" when it declared none).
	ClientCapabilities() json.RawMessage
	// RequestClient sends a request to the client, on the stream of the
	// call in flight, and returns the client's result as is. A JSON-RPC
	// error from the client comes back as an *RPCError; EUNAVAILABLE when
	// the client cannot be reached; ctx ends the wait.
	RequestClient(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// inputKeyContext is the context key of WithInputKey.
type inputKeyContext struct{}

// WithInputKey returns ctx carrying the key under which an upstream of the
// 2026-07-28 revision named an input request. A client of that revision
// asked for input through the gateway (InputRequiredResult) then sees the
// request under the upstream's own key where it can, as if it spoke to
// the upstream itself; other clients ignore it.
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKeyContext{}, key)
}

// InputKey returns the key WithInputKey put in ctx, or "".
func InputKey(ctx context.Context) string {
	key, _ := ctx.Value(inputKeyContext{}).(string)
	return key
}

// RPCError is a JSON-RPC error to pass through as it is: an upstream
// server's error on a relayed request, or a client's error on a
// server→client request.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns the code and message.
func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Forward is a client request other than tools/call that the gateway
// passes to an agent's backends: resources/list, resources/templates/list,
// resources/read, resources/subscribe, resources/unsubscribe, prompts/list,
// prompts/get, completion/complete.
type Forward struct {
	Agent  *Agent
	Method string
	Params json.RawMessage
	// Caller is who makes the request; the edge sets it.
	Caller    Caller
	SessionID string
	// Notifier and Client reach the client while the request runs; never
	// nil.
	Notifier Notifier
	Client   ClientRequester
	// Trace is the W3C trace context of the request's span, which upstream
	// MCP servers get as HTTP headers; empty when tracing is off.
	Trace TraceContext
}

// SessionNotifier sends notifications to MCP sessions outside any call:
// an upstream's resources/updated to the session that subscribed, its
// list_changed to every session of the agent.
type SessionNotifier interface {
	// NotifySession sends a notification on the session's GET stream, if
	// it has one open on this replica.
	NotifySession(sessionID, method string, params json.RawMessage)
	// NotifyAgent sends a notification to every open session of the agent
	// on this replica.
	NotifyAgent(agentID, method string, params json.RawMessage)
}
