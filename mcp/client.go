package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpgate/mcpgate"
)

// Server→client requests (sampling/createMessage, elicitation/create,
// roots/list) go out on the stream of the call that makes them, or on the
// session's GET stream once that call's reply is over, with an id unique
// across the session (and the replicas, through the server's instance
// prefix). The client answers with a POST of a JSON-RPC response, which
// resolves the waiting call.
//
// The waiter lives in the memory of the replica that sent the request. A
// client whose POST reaches another replica (a load balancer without
// session affinity) has its answer passed on through Peers to the replica
// its id names (see peers.go); without Peers such an answer is dropped and
// the call waits until its context ends.

// clientResponse is the client's answer to a server→client request.
type clientResponse struct {
	result json.RawMessage
	err    error
}

// requestCapability names the client capability each server→client request
// needs; a method not listed needs none.
var requestCapability = map[string]string{
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
	"roots/list":             "roots",
}

// ClientCapabilities returns the capabilities the client declared at
// initialize, "{}" when it declared none.
func (c *callReply) ClientCapabilities() json.RawMessage {
	if firstByte(c.ls.clientCaps) != '{' {
		return json.RawMessage("{}")
	}
	return c.ls.clientCaps
}

// RequestClient sends a request to the client and waits for its answer. A
// JSON-RPC error from the client, or a capability the client did not
// declare, comes back as an *mcpgate.RPCError; EUNAVAILABLE when the client
// cannot be reached (no stream to send on, or the session ended). When ctx
// ends first, the client is sent notifications/cancelled for the request.
func (c *callReply) RequestClient(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := c.checkCapability(method); err != nil {
		return nil, err
	}
	if c.held != nil {
		return c.held.ask(ctx, method, params)
	}
	id, answer := c.ls.await(c.s.newRequestID())
	defer c.ls.forget(id)
	if !c.send(appendRequest(nil, id, method, params)) {
		return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "the client cannot receive the %s request: it has no stream open on this session", method)
	}
	select {
	case resp := <-answer:
		return resp.result, resp.err
	case <-c.ls.ctx.Done():
		return nil, sessionEnded(method)
	case <-ctx.Done():
		if c.ls.ctx.Err() != nil {
			// The session's end cancels its calls too (their contexts
			// derive from its own, which is cancelled first): report the
			// end, whichever of the two the select saw.
			return nil, sessionEnded(method)
		}
		c.send(appendNotification(nil, "notifications/cancelled", cancelledParams(ctx, id)))
		return nil, fmt.Errorf("waiting for the client's answer to %s: %w", method, ctx.Err())
	}
}

// sessionEnded is RequestClient's error when the session ends before the
// client answered method.
func sessionEnded(method string) error {
	return mcpgate.Errorf(mcpgate.EUNAVAILABLE, "the session ended before the client answered %s", method)
}

// ScopeID names the scope the call's server→client requests belong to when
// it has no session: a held 2026-07-28 call's own ("mrtr-" and its id),
// released through Options.SessionClosed when the call ends. It is "" for
// every other reply. Upstream MCP skills key an upstream session of the
// call's own by it, so that the upstream's requests reach this call.
func (c *callReply) ScopeID() string {
	if c.held == nil {
		return ""
	}
	return c.held.scope()
}

// checkCapability refuses a request the client did not declare the
// capability for, as the client itself would.
func (c *callReply) checkCapability(method string) error {
	name, ok := requestCapability[method]
	if !ok {
		return nil
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.ClientCapabilities(), &caps) == nil && caps[name] != nil && string(caps[name]) != "null" {
		return nil
	}
	return &mcpgate.RPCError{Code: codeMethodNotFound, Message: fmt.Sprintf("the client did not declare the %s capability, so it cannot receive %s", name, method)}
}

// send streams a message to the client: on the call's reply while it is
// open and can stream, else on the session's GET stream. It reports false
// when there is neither.
func (c *callReply) send(msg []byte) bool {
	c.mu.Lock()
	if !c.done && c.canStream() {
		c.sendLocked(msg)
		c.mu.Unlock()
		return true
	}
	c.mu.Unlock()
	return c.ls.emitOnGet(msg)
}

// newRequestID returns the JSON id of a new server→client request.
func (s *Server) newRequestID() json.RawMessage {
	return json.RawMessage(`"` + s.instance + "-" + strconv.FormatUint(s.requestSeq.Add(1), 36) + `"`)
}

// await registers a waiter for the response to request id, returning the
// id and the channel the response arrives on.
func (ls *liveSession) await(id json.RawMessage) (json.RawMessage, <-chan clientResponse) {
	ch := make(chan clientResponse, 1)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.waiters == nil {
		ls.waiters = make(map[string]chan clientResponse)
	}
	ls.waiters[idKey(id)] = ch
	return id, ch
}

// forget removes the waiter for request id, if it is still there.
func (ls *liveSession) forget(id json.RawMessage) {
	ls.mu.Lock()
	delete(ls.waiters, idKey(id))
	ls.mu.Unlock()
}

// deliver hands a client's response to the request waiting for it, here
// or, through Peers, on the replica that sent the request.
func (s *Server) deliver(ls *liveSession, m *message) {
	if !ls.deliver(m) {
		s.forwardAnswer(ls, m)
	}
}

// deliver hands a client's response to the request waiting for it in this
// replica, reporting whether there was one. Responses to unknown requests,
// or to requests no longer waited for, are dropped.
func (ls *liveSession) deliver(m *message) bool {
	if !validID(m.ID) {
		return false
	}
	key := idKey(m.ID)
	ls.mu.Lock()
	ch := ls.waiters[key]
	delete(ls.waiters, key)
	ls.mu.Unlock()
	if ch == nil {
		return false
	}
	if m.Error != nil {
		ch <- clientResponse{err: parseClientError(m.Error)}
		return true
	}
	ch <- clientResponse{result: bytes.Clone(m.Result)}
	return true
}

// parseClientError decodes the error member of a client's response.
func parseClientError(raw json.RawMessage) *mcpgate.RPCError {
	var e struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil {
		return &mcpgate.RPCError{Code: codeInternal, Message: "the client answered with a malformed error"}
	}
	return &mcpgate.RPCError{Code: *e.Code, Message: e.Message, Data: bytes.Clone(e.Data)}
}

// emitOnGet sends a message on the session's GET stream, reporting false
// when it has none open.
func (ls *liveSession) emitOnGet(msg []byte) bool {
	ls.mu.Lock()
	st := ls.streams.get
	ls.mu.Unlock()
	if st == nil || st.isClosed() {
		return false
	}
	st.emit(msg)
	return true
}

// cancelledParams encodes the params of notifications/cancelled for
// request id, abandoned because ctx ended.
func cancelledParams(ctx context.Context, id json.RawMessage) []byte {
	b := append([]byte(`{"requestId":`), id...)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, "the gateway stopped waiting: "+ctx.Err().Error())
	return append(b, '}')
}
