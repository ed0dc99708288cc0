package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpgate/mcpgate"
)

// JSON-RPC error codes the endpoint sends (docs/architecture.md, "Errors").
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeGateway        = -32000 // a gateway condition; data.reason says which
	codeTimeout        = -32003
	codeCancelled      = -32800
)

// rpcError is the error member of a JSON-RPC response. Data is an
// *errorData for the gateway's own conditions, or a relayed error's data as
// json.RawMessage; nil leaves it out.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// errorData tells a client which gateway condition refused it.
type errorData struct {
	Reason       string `json:"reason"`
	Status       int    `json:"status"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// toRPCError maps an error returned by a method to the JSON-RPC error the
// client sees. An *mcpgate.RPCError (an upstream server's error on a relayed
// request) is sent as it is: code, message and data. Otherwise this is the
// one place where mcpgate codes become JSON-RPC codes:
// EINVALID → -32602, ENOTFOUND → -32601, ETIMEOUT → -32003, ECANCELED →
// -32800, EINTERNAL → -32603 with a generic message (the caller logs the real
// error), and every gateway condition (EUNAUTHORIZED, EFORBIDDEN, ECONFLICT,
// EMISMATCH, ERATELIMIT, EUNAVAILABLE, ETOOLARGE, ...) → -32000 with data {reason,
// status, retry_after_ms?}.
func toRPCError(err error) *rpcError {
	var relayed *mcpgate.RPCError
	if errors.As(err, &relayed) {
		return fromRelayed(relayed)
	}
	code, msg := mcpgate.ErrorCode(err), mcpgate.ErrorMessage(err)
	switch code {
	case mcpgate.EINVALID:
		return &rpcError{Code: codeInvalidParams, Message: msg}
	case mcpgate.ENOTFOUND:
		return &rpcError{Code: codeMethodNotFound, Message: msg}
	case mcpgate.ETIMEOUT:
		return &rpcError{Code: codeTimeout, Message: msg, Data: &errorData{Reason: code, Status: http.StatusGatewayTimeout}}
	case mcpgate.ECANCELED:
		return &rpcError{Code: codeCancelled, Message: "Request cancelled"}
	case mcpgate.EINTERNAL:
		return &rpcError{Code: codeInternal, Message: msg}
	}
	return &rpcError{Code: codeGateway, Message: msg, Data: conditionData(err, code)}
}

// fromRelayed copies a relayed JSON-RPC error, leaving out data that is
// absent or not valid JSON.
func fromRelayed(e *mcpgate.RPCError) *rpcError {
	out := &rpcError{Code: e.Code, Message: e.Message}
	if len(e.Data) > 0 && mcpgate.ValidJSON(e.Data) {
		out.Data = e.Data
	}
	return out
}

// conditionData describes a gateway condition for error.data.
func conditionData(err error, code string) *errorData {
	d := &errorData{Reason: code, Status: mcpgate.HTTPStatus(code)}
	var e *mcpgate.Error
	if errors.As(err, &e) {
		d.RetryAfterMS = e.RetryAfterMS
	}
	return d
}

// WriteHTTPError writes err as an HTTP error: the status comes from its
// mcpgate code (EUNAUTHORIZED 401, EFORBIDDEN 403, ENOTFOUND 404, EINVALID
// 400, ECONFLICT 409, EMISMATCH 422, ETOOLARGE 413, ERATELIMIT 429, ETIMEOUT 504,
// EUNAVAILABLE 503, else 500) and the body is a JSON-RPC error with a null id
// and data {reason, status, retry_after_ms?}. A 429 also gets Retry-After.
// Headers such as WWW-Authenticate must be set before calling it.
func WriteHTTPError(w http.ResponseWriter, err error) {
	code := mcpgate.ErrorCode(err)
	d := conditionData(err, code)
	e := &rpcError{Code: codeGateway, Message: mcpgate.ErrorMessage(err), Data: d}
	if code == mcpgate.EINTERNAL {
		e.Code = codeInternal
	}
	SetRetryAfter(w, err)
	writeRPCError(w, d.Status, e)
}

// SetRetryAfter sets Retry-After (whole seconds, rounded up) when err tells
// the caller when to try again, as a rate limit's refusal does. Every HTTP
// edge that answers 429 calls it.
func SetRetryAfter(w http.ResponseWriter, err error) {
	var e *mcpgate.Error
	if errors.As(err, &e) && e.RetryAfterMS > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((e.RetryAfterMS+999)/1000, 10))
	}
}

// writeStatus writes an HTTP error that has no mcpgate code, such as 405,
// 406 or 415.
func writeStatus(w http.ResponseWriter, status int, reason, msg string) {
	writeRPCError(w, status, &rpcError{Code: codeGateway, Message: msg, Data: &errorData{Reason: reason, Status: status}})
}

// writeRPCError writes a JSON-RPC error response with a null id.
func writeRPCError(w http.ResponseWriter, status int, e *rpcError) {
	writeJSON(w, status, appendError(nil, nil, e))
}

// writeJSON writes body as an application/json response.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

// flush sends what w holds to the client now rather than when the handler
// returns; a writer that cannot flush keeps it until then.
func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// contentTypeJSON is the Content-Type of every JSON reply, one slice for
// all: net/http copies a response's header before it writes it, and
// nothing here changes a value in place.
var contentTypeJSON = []string{"application/json"}

// marshalError encodes e; it cannot fail for rpcError.
func marshalError(e *rpcError) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		return []byte(`{"code":-32603,"message":"Internal error."}`)
	}
	return b
}
