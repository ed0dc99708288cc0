package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/mcpgate/mcpgate"
)

// answer runs a request other than initialize and tools/call and returns
// its response.
func (s *Server) answer(r *http.Request, ls *liveSession, agent *mcpgate.Agent, m *message) []byte {
	start := s.now()
	ctx, span := s.startSpan(r, ls, agent, m)
	result, err := s.method(ctx, ls, agent, m)
	a := &access{err: err}
	s.endSpan(span, a)
	s.logAccess(ctx, ls, agent, m.method, a, start)
	if err != nil {
		return s.errorResponse(ls, m, err)
	}
	if modern(ls.version) {
		result = s.modernResult(m.method, result)
	}
	return appendResult(s.responseBuf(len(`{"jsonrpc":"2.0","id":,"result":}`)+len(m.ID)+len(result)), m.ID, result)
}

// method dispatches the requests a session may send besides tools/call.
func (s *Server) method(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, m *message) ([]byte, error) {
	if result, handled, err := s.taskMethod(ctx, ls, agent, m); handled {
		return result, err
	}
	switch m.method {
	case "ping":
		return []byte("{}"), nil
	case "tools/list":
		return s.listTools(ctx, agent, m.Params, s.tasksFor(ls.version))
	case "logging/setLevel":
		return s.setLevel(ctx, ls, m.Params)
	}
	return nil, methodNotFound(m.method)
}

// errorResponse returns the error response to m, logging internal errors,
// whose details the client does not see.
func (s *Server) errorResponse(ls *liveSession, m *message, err error) []byte {
	if mcpgate.ErrorCode(err) == mcpgate.EINTERNAL {
		s.log.Error("mcp: request failed", "method", m.method, "session", ls.id, "err", err)
	}
	e := toRPCError(err)
	if modern(ls.version) {
		e = modernError(e)
	}
	return appendError(nil, m.ID, e)
}

// notification handles a client notification. Only cancellation needs
// action; notifications/initialized and unknown ones are accepted and
// ignored, as JSON-RPC requires.
func (s *Server) notification(ls *liveSession, m *message) {
	if m.method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    json.RawMessage `json:"reason"`
	}
	if json.Unmarshal(m.Params, &p) != nil || !validID(p.RequestID) {
		return
	}
	reason, _ := jsonString(p.Reason)
	if key := idKey(p.RequestID); !ls.cancelCall(key, reason) {
		// The call may run on another replica: whichever holds it cancels it.
		s.sendPeer("", &peerMessage{Kind: peerCancel, Session: ls.id, Key: key})
	}
}

// setLevel handles logging/setLevel: the session's minimum level of
// notifications/message, stored so every replica applies it.
func (s *Server) setLevel(ctx context.Context, ls *liveSession, params json.RawMessage) ([]byte, error) {
	var p struct {
		Level string `json:"level"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	idx := levelIndex(p.Level)
	if idx < 0 {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "unknown log level %q: use debug, info, notice, warning, error, critical, alert or emergency", p.Level)
	}
	ls.level.Store(int32(idx))
	if err := s.store.SetSessionLogLevel(ctx, ls.id, p.Level); err != nil {
		return nil, err
	}
	return []byte("{}"), nil
}

// unmarshalParams decodes params into v; absent params leave v zero.
func unmarshalParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: %s", describeDecodeError(err))
	}
	return nil
}

// describeDecodeError says what was wrong with params in JSON's terms,
// never naming the Go types they decode into.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return "params must be a JSON object"
	}
	where := "params"
	if te.Field != "" {
		where = te.Field
	}
	return fmt.Sprintf("%s must be %s, not %s", where, jsonKind(te.Type), te.Value)
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
