package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpgate/mcpgate"
)

// message is the envelope of one JSON-RPC message from the server; each
// member stays raw.
type message struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params json.RawMessage   `json:"params"`
	Result json.RawMessage   `json:"result"`
	Error  *mcpgate.RPCError `json:"error"`
	// bad marks a member of the wrong type (decodeMessage).
	bad bool
}

// isResponse reports whether m answers a request.
func (m *message) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// isRequest reports whether m is a request of the server.
func (m *message) isRequest() bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

// receive handles one message from the server. from is the request whose
// reply stream carried it, nil when the message came on a stream of its
// own (the GET stream, stdio). It reports whether m answered from.
func (s *Session) receive(data []byte, from *pending) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false
	}
	m, ok := decodeMessage(data)
	if !ok {
		s.log.Warn("mcpclient: the upstream sent a message that is not JSON-RPC", "len", len(data))
		return false
	}
	switch {
	case m.isResponse():
		return s.resolve(m, from)
	case m.isRequest():
		go s.serve(m)
	case m.Method != "":
		s.notified(m, from)
	}
	return false
}

// resolve hands a response to the request it answers.
func (s *Session) resolve(m *message, from *pending) bool {
	key := string(m.ID)
	if id, ok := jsonString(m.ID); ok {
		key = id
	}
	s.mu.Lock()
	p := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if p == nil {
		return false
	}
	r := reply{result: m.Result}
	if m.Error != nil {
		r = reply{err: m.Error}
	} else if r.result == nil {
		r.result = json.RawMessage("null")
	}
	p.reply <- r
	return p == from
}

// jsonString returns the plain string a JSON string holds.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// notified routes a notification: to the request whose stream carried it,
// else to the request its progress token names, else (a log message on a
// transport with one stream) to the newest request that takes
// notifications, else to Options.Notify.
func (s *Session) notified(m *message, from *pending) {
	if from != nil && from.opts.Notify != nil {
		from.opts.Notify(m.Method, m.Params)
		return
	}
	if p := s.takerOf(m); p != nil {
		p.opts.Notify(m.Method, m.Params)
		return
	}
	if s.opts.Notify != nil {
		s.opts.Notify(m.Method, m.Params)
	}
}

// takerOf returns the request in flight a notification that came on no
// request's stream is about, or nil.
func (s *Session) takerOf(m *message) *pending {
	switch m.Method {
	case "notifications/progress":
		var p struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return nil
		}
		tok, ok := jsonString(p.Token)
		if !ok {
			return nil
		}
		return s.find(func(p *pending) bool { return p.opts.ProgressToken == tok })
	case "notifications/message":
		if s.t.oneStream() {
			return s.find(func(*pending) bool { return true })
		}
	}
	return nil
}

// find returns the newest request in flight with a Notify that ok takes.
func (s *Session) find(ok func(*pending) bool) *pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *pending
	for _, p := range s.pending {
		if p.opts.Notify != nil && ok(p) && (best == nil || p.order > best.order) {
			best = p
		}
	}
	return best
}

// serve answers a request of the server and sends the answer back.
func (s *Session) serve(m *message) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	var out []byte
	switch res, err := s.answer(ctx, m); {
	case err == nil:
		out = appendResult(nil, m.ID, res)
	default:
		out = appendError(nil, m.ID, asRPCError(err))
	}
	if err := s.t.send(ctx, out, nil); err != nil && s.Err() == nil {
		s.log.Warn("mcpclient: cannot send the answer to the upstream's request", "method", m.Method, "err", err)
	}
}

// answer returns the result of a server's request.
func (s *Session) answer(ctx context.Context, m *message) (json.RawMessage, error) {
	if m.Method == "ping" {
		return json.RawMessage("{}"), nil
	}
	if s.opts.Request == nil {
		return nil, &mcpgate.RPCError{Code: -32601, Message: "the client does not handle " + m.Method}
	}
	return s.opts.Request(ctx, m.Method, m.Params)
}

// asRPCError turns the error of a request handler into a JSON-RPC error.
func asRPCError(err error) *mcpgate.RPCError {
	var rpc *mcpgate.RPCError
	if errors.As(err, &rpc) {
		return rpc
	}
	return &mcpgate.RPCError{Code: -32603, Message: mcpgate.ErrorMessage(err)}
}

// appendRequest appends a JSON-RPC request; nil params are left out.
func appendRequest(b []byte, id, method string, params json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return appendMethod(b, method, params)
}

// appendNotification appends a JSON-RPC notification.
func appendNotification(b []byte, method string, params json.RawMessage) []byte {
	return appendMethod(append(b, `{"jsonrpc":"2.0"`...), method, params)
}

// appendMethod appends the method and params members and ends the object.
func appendMethod(b []byte, method string, params json.RawMessage) []byte {
	b = mcpgate.AppendJSONString(append(b, `,"method":`...), method)
	if len(params) > 0 {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, '}')
}

// appendResult appends a success response.
func appendResult(b []byte, id, result json.RawMessage) []byte {
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	b = append(append(b, `{"jsonrpc":"2.0","id":`...), id...)
	return append(append(append(b, `,"result":`...), result...), '}')
}

// appendError appends an error response.
func appendError(b []byte, id json.RawMessage, e *mcpgate.RPCError) []byte {
	eb, _ := json.Marshal(e)
	b = append(append(b, `{"jsonrpc":"2.0","id":`...), id...)
	return append(append(append(b, `,"error":`...), eb...), '}')
}
