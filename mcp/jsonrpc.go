package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// kind classifies a decoded JSON-RPC message.
type kind uint8

// The kinds of message a client may POST.
const (
	kindInvalid      kind = iota // not a valid JSON-RPC 2.0 message
	kindRequest                  // method and id
	kindNotification             // method, no id
	kindResponse                 // id with result or error: an answer to a server→client request
)

// message is one JSON-RPC 2.0 message as received. Only the envelope is
// decoded (see decodeEnvelope); params, result and error stay raw until a
// method needs them. A member that is absent is nil; one that is null holds
// "null".
type message struct {
	JSONRPC, ID, Method, Params, Result, Error json.RawMessage

	kind      kind
	method    string
	problem   string // why the message is invalid
	idUnclear bool   // the id member is duplicated or miscased: reply null
}

// decode parses a POST body: one message, or a batch (a JSON array). It
// returns a -32700 error for malformed JSON and a -32600 error for JSON that
// is no message at all; otherwise every message has its kind, and invalid
// ones say why in problem.
func decode(body []byte) (msgs []*message, batch bool, rerr *rpcError) {
	switch firstByte(body) {
	case '{':
		if !mcpgate.ValidJSON(body) {
			return nil, false, parseError()
		}
		m := new(message)
		m.decodeEnvelope(body)
		m.classify()
		return []*message{m}, false, nil
	case '[':
		return decodeBatch(body)
	}
	if mcpgate.ValidJSON(body) {
		return nil, false, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: the body must be a JSON-RPC object"}
	}
	return nil, false, parseError()
}

// decodeBatch decodes a JSON array of messages.
func decodeBatch(body []byte) ([]*message, bool, *rpcError) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, true, parseError()
	}
	if len(raws) == 0 {
		return nil, true, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: empty batch"}
	}
	msgs := make([]*message, len(raws))
	for i, raw := range raws {
		m := new(message)
		msgs[i] = m
		if firstByte(raw) != '{' {
			m.invalid("a batch element must be a JSON-RPC object")
			continue
		}
		m.decodeEnvelope(raw) // valid: it is part of the array just decoded
		m.classify()
	}
	return msgs, true, nil
}

func parseError() *rpcError {
	return &rpcError{Code: codeParseError, Message: "Parse error: the body is not valid JSON"}
}

// classify sets the message's kind from its members.
func (m *message) classify() {
	if m.problem != "" { // set by decodeEnvelope
		m.kind = kindInvalid
		return
	}
	if string(m.JSONRPC) != `"2.0"` {
		m.invalid(`"jsonrpc" must be "2.0"`)
		return
	}
	if m.Method == nil {
		m.classifyResponse()
		return
	}
	name, ok := jsonString(m.Method)
	switch {
	case !ok:
		m.invalid(`"method" must be a string`)
	case m.Result != nil || m.Error != nil:
		m.invalid(`a request cannot carry "result" or "error"`)
	case !validParams(m.Params):
		m.invalid(`"params" must be an object`)
	case m.ID == nil:
		m.kind, m.method = kindNotification, name
	case !validID(m.ID):
		m.invalid(`"id" must be a string or an integer`)
	default:
		m.kind, m.method = kindRequest, name
	}
}

// classifyResponse accepts a message without a method as a response.
func (m *message) classifyResponse() {
	hasID := m.ID != nil && (validID(m.ID) || string(m.ID) == "null")
	if hasID && (m.Result != nil) != (m.Error != nil) {
		m.kind = kindResponse
		return
	}
	m.invalid(`"method" is missing`)
}

func (m *message) invalid(problem string) {
	m.kind, m.problem = kindInvalid, problem
}

// replyID returns the id to answer the message with: its own when valid,
// else null.
func (m *message) replyID() json.RawMessage {
	if m.ID != nil && !m.idUnclear && validID(m.ID) {
		return m.ID
	}
	return nil
}

// validParams reports whether params is absent, null, an object or an array.
func validParams(p json.RawMessage) bool {
	switch firstByte(p) {
	case 0, '{', '[', 'n':
		return true
	}
	return false
}

// validID reports whether a decoded id is a string or an integer.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// idKey returns a canonical key for a valid id, so that "1" and 1 differ
// and escaped strings match their plain spelling.
func idKey(id json.RawMessage) string {
	if s, ok := jsonString(id); ok {
		return "s" + s
	}
	return "n" + string(id)
}

// jsonString returns the string a JSON value holds, if it is a string.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// firstByte returns the first non-space byte of b, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// appendResult appends a JSON-RPC success response, growing b once for it:
// a tool's result may be large.
func appendResult(b []byte, id json.RawMessage, result []byte) []byte {
	b = slices.Grow(b, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// appendError appends a JSON-RPC error response; a nil id is written null.
func appendError(b []byte, id json.RawMessage, e *rpcError) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		id = json.RawMessage("null")
	}
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, marshalError(e)...)
	return append(b, '}')
}

// appendNotification appends a JSON-RPC notification; nil params are left
// out.
func appendNotification(b []byte, method string, params []byte) []byte {
	return appendMethod(append(b, `{"jsonrpc":"2.0"`...), method, params)
}

// appendRequest appends a JSON-RPC request; nil params are left out.
func appendRequest(b []byte, id json.RawMessage, method string, params []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	return appendMethod(append(b, id...), method, params)
}

// appendMethod appends the method and params members of a request or
// notification, and ends it; nil params are left out.
func appendMethod(b []byte, method string, params []byte) []byte {
	b = append(b, `,"method":`...)
	b = appendJSONString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Errors of DecodeObject.
var (
	// ErrNotJSON is a body that is not valid JSON: a JSON-RPC parse error.
	ErrNotJSON = errors.New("the body is not valid JSON")
	// ErrNotObject is valid JSON that is not one object (an array, a
	// batch, a string...): a JSON-RPC invalid request.
	ErrNotObject = errors.New("the body is not one JSON-RPC object")
)

// Object is the envelope of one JSON-RPC 2.0 object, read by the same
// decoder as the MCP endpoint's messages, for the gateway's other JSON-RPC
// endpoints (the HandsAI-compatible surface). Each member is raw, a slice
// of the body: nil when absent, "null" when null. What the members must
// hold is the endpoint's to check.
type Object struct {
	JSONRPC, ID, Method, Params json.RawMessage
	// Problem says why the member names make the object invalid: a
	// duplicate envelope member, or one whose name differs from an
	// envelope member's only in case. Empty when they are fine.
	Problem string
	// IDUnclear reports that the id member is duplicated or miscased, so
	// that an answer must not echo either.
	IDUnclear bool
}

// DecodeObject reads a body holding one JSON-RPC object. It returns
// ErrNotJSON or ErrNotObject for a body that is neither.
func DecodeObject(body []byte) (*Object, error) {
	switch {
	case !mcpgate.ValidJSON(body):
		return nil, ErrNotJSON
	case firstByte(body) != '{':
		return nil, ErrNotObject
	}
	m := new(message)
	m.decodeEnvelope(body)
	return &Object{JSONRPC: m.JSONRPC, ID: m.ID, Method: m.Method, Params: m.Params, Problem: m.problem, IDUnclear: m.idUnclear}, nil
}
