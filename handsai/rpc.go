package handsai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
)

// JSON-RPC error codes of the HandsAI-compatible surface.
const (
	handsAIParseError     = -32700
	handsAIInvalidRequest = -32600
	handsAIMethodNotFound = -32601
	handsAIInvalidParams  = -32602
	handsAIInternal       = -32603
)

// handsAIMissingParams is HandsAI's message for a null body or absent params.
const handsAIMissingParams = "Invalid params: missing required parameters"

// rpcRequest is one JSON-RPC request to the HandsAI surface.
type rpcRequest struct {
	Method string
	Params json.RawMessage
	// ID is the request's id, a string or a number; nil when absent.
	ID json.RawMessage
}

// rpcResponse is a JSON-RPC response of the HandsAI surface: a result or
// an error, and the request's id when it had one.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcFailure     `json:"error,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// rpcFailure is a JSON-RPC error object; handlers return it as an error to
// choose the code and message themselves.
type rpcFailure struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data says which gateway condition refused the call, as on the MCP
	// endpoint; its status is also the response's HTTP status.
	Data *failureData `json:"data,omitempty"`
}

// failureData is the data of a gateway condition's error.
type failureData struct {
	Reason       string `json:"reason"`
	Status       int    `json:"status"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// handsAIGateway is the JSON-RPC code of a gateway condition, the MCP
// endpoint's.
const handsAIGateway = -32000

// conditionFailure is the failure of a call the gateway refused for a
// condition the caller can act on: a rate limit (ERATELIMIT, 429 with
// retry_after_ms), a key still in flight (ECONFLICT, 409) or a key reused
// for another call (EMISMATCH, 422). The data is the MCP endpoint's.
func conditionFailure(err error) *rpcFailure {
	code := mcpgate.ErrorCode(err)
	d := &failureData{Reason: code, Status: mcpgate.HTTPStatus(code)}
	var e *mcpgate.Error
	if errors.As(err, &e) {
		d.RetryAfterMS = e.RetryAfterMS
	}
	return &rpcFailure{Code: handsAIGateway, Message: mcpgate.ErrorMessage(err), Data: d}
}

// Error returns the message.
func (f *rpcFailure) Error() string { return f.Message }

// rpcFailf returns a JSON-RPC error.
func rpcFailf(code int, format string, args ...any) *rpcFailure {
	return &rpcFailure{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeRPCRequest reads one JSON-RPC request for method with the mcp
// package's decoder. On failure it returns the JSON-RPC error, and the
// request too once its id is known, so that the error can echo it.
func decodeRPCRequest(body []byte, method string) (*rpcRequest, *rpcFailure) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || string(body) == "null" {
		return nil, rpcFailf(handsAIInvalidParams, handsAIMissingParams)
	}
	obj, err := mcp.DecodeObject(body)
	switch {
	case errors.Is(err, mcp.ErrNotJSON):
		return nil, rpcFailf(handsAIParseError, "Parse error: the body is not valid JSON")
	case err != nil:
		return nil, rpcFailf(handsAIInvalidRequest, "Invalid Request: send one JSON-RPC request object")
	}
	req := &rpcRequest{Params: obj.Params, ID: obj.ID}
	if obj.IDUnclear {
		req.ID = nil
	}
	if fail := checkRPCID(req); fail != nil {
		return nil, fail
	}
	return req, checkRPCRequest(obj, req, method)
}

// checkRPCRequest checks the envelope of a request for method and sets
// req.Method.
func checkRPCRequest(obj *mcp.Object, req *rpcRequest, method string) *rpcFailure {
	version, okVersion := stringMember(obj.JSONRPC)
	name, okMethod := stringMember(obj.Method)
	req.Method = name
	switch {
	case obj.Problem != "":
		return rpcFailf(handsAIInvalidRequest, "Invalid Request: %s", obj.Problem)
	case !okVersion || !okMethod:
		return rpcFailf(handsAIInvalidRequest, "Invalid Request: jsonrpc and method must be strings")
	case version != "2.0":
		return rpcFailf(handsAIInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
	case name != method:
		return rpcFailf(handsAIMethodNotFound, "Method not found: %q; this endpoint serves %q", name, method)
	}
	return nil
}

// stringMember returns the string an envelope member holds: "" when it is
// absent or null, not ok when it is not a string.
func stringMember(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil {
		return "", true
	}
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// checkRPCID accepts a string or number id and drops a null one.
func checkRPCID(req *rpcRequest) *rpcFailure {
	if isNullJSON(req.ID) {
		req.ID = nil
		return nil
	}
	if c := req.ID[0]; c == '"' || c == '-' || (c >= '0' && c <= '9') {
		return nil
	}
	return rpcFailf(handsAIInvalidRequest, "Invalid Request: id must be a string or a number")
}

// isNullJSON reports whether a JSON value is absent or null.
func isNullJSON(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

// toolCallParams are the params of tools/call.
type toolCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// decodeToolCallParams reads tools/call params; absent arguments are an empty
// object.
func decodeToolCallParams(raw json.RawMessage) (*toolCallParams, error) {
	if isNullJSON(raw) {
		return nil, rpcFailf(handsAIInvalidParams, handsAIMissingParams)
	}
	p := &toolCallParams{}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, rpcFailf(handsAIInvalidParams, "Invalid params: params must be an object with a string name and an arguments object")
	}
	if p.Name == "" {
		return nil, rpcFailf(handsAIInvalidParams, "Invalid params: name is required")
	}
	if isNullJSON(p.Arguments) {
		p.Arguments = json.RawMessage("{}")
	}
	return p, nil
}

// invalidParamsFailure turns the lines of a schema validation failure, such as
// "(arguments): missing property 'location'" or "/limit: got string, want
// integer", into HandsAI's message: "Invalid params: location is required;
// limit: got string, want integer".
func invalidParamsFailure(msg string) *rpcFailure {
	var out []string
	for line := range strings.SplitSeq(msg, "\n") {
		out = append(out, describeSchemaProblem(line)...)
	}
	return rpcFailf(handsAIInvalidParams, "Invalid params: %s", strings.Join(out, "; "))
}

// describeSchemaProblem rewrites one validation line, naming the field as a
// dotted path.
func describeSchemaProblem(line string) []string {
	loc, why, ok := strings.Cut(line, ": ")
	if !ok {
		return []string{line}
	}
	field := problemField(loc)
	if names := schemaMissingProperties(why); names != nil {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = dottedField(field, n) + " is required"
		}
		return out
	}
	if field == "" {
		field = "arguments"
	}
	return []string{field + ": " + why}
}

// problemField turns a validation location ("/rows/0/qty", or "(arguments)"
// for the whole object) into a dotted path, "" for the whole object.
func problemField(loc string) string {
	if !strings.HasPrefix(loc, "/") {
		return ""
	}
	parts := strings.Split(loc[1:], "/")
	for i, p := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
	}
	return strings.Join(parts, ".")
}

// dottedField appends a property name to a dotted path.
func dottedField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// schemaMissingProperties returns the names of a "missing property 'a'" or
// "missing properties 'a', 'b'" message, nil for any other message.
func schemaMissingProperties(why string) []string {
	list, ok := strings.CutPrefix(why, "missing property ")
	if !ok {
		if list, ok = strings.CutPrefix(why, "missing properties "); !ok {
			return nil
		}
	}
	if len(list) < 2 || list[0] != '\'' || list[len(list)-1] != '\'' {
		return nil
	}
	names := strings.Split(list[1:len(list)-1], "', '")
	for i, n := range names {
		names[i] = strings.ReplaceAll(n, `\'`, "'")
	}
	return names
}
