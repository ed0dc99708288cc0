package upstream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's ClientSession decodes every result into a typed struct, which
// would lose unknown fields and number precision if re-encoded. A capture
// keeps the upstream's own result bytes instead: the request's context
// carries it, and the transport (an http.RoundTripper for Streamable HTTP,
// a Connection wrapper for stdio) fills it from the response that answers
// the request written under that context.

// anyID is the id of a capture that takes any response it is offered.
const anyID = "*"

// captureKey is the context key of a *capture.
type captureKey struct{}

// capture receives the raw result of the one request sent under its
// context.
type capture struct {
	// notifier and token, when set, receive the progress and log
	// notifications that come with the request, in order and before its
	// result: the SDK's own handlers run on another goroutine, too late.
	notifier mcpgate.Notifier
	token    string

	mu     sync.Mutex
	id     string // the JSON-RPC id of the request, once written
	raw    json.RawMessage
	rpcErr *mcpgate.RPCError // the upstream's error response
	lost   error             // why the answer can no longer come
	// forget drops the capture from the connection that waits to fill it.
	forget func()
}

// withNotifyingCapture returns a context whose request's raw result the
// capture will hold; n, when not nil, gets the request's progress (with
// token) and log messages.
func withNotifyingCapture(ctx context.Context, n mcpgate.Notifier, token string) (context.Context, *capture) {
	c := &capture{notifier: n, token: token}
	return context.WithValue(ctx, captureKey{}, c), c
}

// captureFrom returns the capture of ctx, or nil.
func captureFrom(ctx context.Context) *capture {
	c, _ := ctx.Value(captureKey{}).(*capture)
	return c
}

// setID records the id of the request sent under the capture's context.
func (c *capture) setID(id string) {
	c.mu.Lock()
	c.id = id
	c.mu.Unlock()
}

// offer keeps result, or the error, when it answers the captured request.
// result must not change afterwards.
func (c *capture) offer(id string, result json.RawMessage, rpcErr *mcpgate.RPCError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if (c.id != id && c.id != anyID) || c.raw != nil || c.rpcErr != nil {
		return
	}
	if rpcErr != nil {
		c.rpcErr = rpcErr
		return
	}
	c.raw = result
}

// lose records why the request's answer can no longer come.
func (c *capture) lose(err error) {
	c.mu.Lock()
	c.lost = err
	c.mu.Unlock()
}

// lostError returns why the answer can no longer come, or nil.
func (c *capture) lostError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// pauser is a Notifier whose client can be asked to come back for the rest
// of the request's messages (SEP-1699): its stream ends now, advising it
// to resume after retry.
type pauser interface {
	PauseStream(retry time.Duration)
}

// paused tells the request's client, when its Notifier can be paused, that
// the upstream ended the stream on purpose before answering, so that the
// gateway's client sees what the upstream's would.
func (c *capture) paused(retry time.Duration) {
	if p, ok := c.notifier.(pauser); ok {
		p.PauseStream(retry)
	}
}

// upstreamError returns the error response the upstream sent, or nil.
func (c *capture) upstreamError() *mcpgate.RPCError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rpcErr
}

// notify passes a progress or log notification to the capture's notifier.
// It reports whether the notification was for this capture.
func (c *capture) notify(m *wireMessage) bool {
	if c.notifier == nil {
		return false
	}
	switch m.Method {
	case "notifications/progress":
		var p struct {
			Token    any     `json:"progressToken"`
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		}
		if c.token == "" || json.Unmarshal(m.Params, &p) != nil || p.Token != c.token {
			return false
		}
		c.notifier.Progress(p.Progress, p.Total, p.Message)
		return true
	case "notifications/message":
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return false
		}
		c.notifier.Log(p.Level, p.Logger, p.Data)
		return true
	}
	return false
}

// done releases what the capture holds on its connection.
func (c *capture) done() {
	c.mu.Lock()
	forget := c.forget
	c.mu.Unlock()
	if forget != nil {
		forget()
	}
}

// result returns the captured bytes, or nil.
func (c *capture) result() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

// idKey is a JSON-RPC id as text, the same for an id read from the wire and
// one the SDK built.
func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// wireMessage is the part of a JSON-RPC message a capture looks at.
type wireMessage struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params json.RawMessage   `json:"params"`
	Result json.RawMessage   `json:"result"`
	Error  *mcpgate.RPCError `json:"error"`
}

// isResponse reports whether m answers a request: a result or an error.
func (m *wireMessage) isResponse() bool {
	return m.Method == "" && (m.Result != nil || m.Error != nil)
}

// captureTransport is the http.RoundTripper of Streamable HTTP upstreams:
// it sets the skill's headers and feeds captures from response bodies.
type captureTransport struct {
	next    http.RoundTripper
	headers map[string]string
	// origin is the skill URL's scheme and host: the headers, which may
	// hold secrets, never go anywhere else, not even after a redirect.
	origin string
}

// RoundTrip sends req and, when its context carries a capture, watches
// the response for the captured request's result.
func (t *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && req.URL.Scheme+"://"+req.URL.Host == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	// Each POST of the SDK carries one message, so whatever response comes
	// back on a stream opened under a capture's context (the POST's, or a
	// GET resuming it) answers the captured request: no id to match.
	c := captureFrom(req.Context())
	if c != nil {
		c.setID(anyID)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream" && req.Method == http.MethodPost:
		b := newSSEBody(req.Context(), resp.Body, c)
		b.resume = resumer(t.next, req)
		resp.Body = b
	case c == nil:
	case mt == "application/json":
		resp.Body = &jsonBody{ReadCloser: resp.Body, c: c}
	case mt == "text/event-stream":
		resp.Body = newSSEBody(req.Context(), resp.Body, c)
	}
	return resp, nil
}

// offerMessage passes one JSON-RPC message from the request's stream to
// c: its response, or a notification about it.
func offerMessage(c *capture, m *wireMessage) {
	switch {
	case m.Method != "" && len(m.ID) == 0:
		c.notify(m)
	case m.isResponse():
		c.offer(anyID, m.Result, m.Error)
	}
}

// jsonBody captures from a JSON response body once it is read to the end.
type jsonBody struct {
	io.ReadCloser
	c   *capture
	buf bytes.Buffer
}

// Read reads the body, offering it whole at EOF.
func (b *jsonBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	var m wireMessage
	if err == io.EOF && json.Unmarshal(b.buf.Bytes(), &m) == nil {
		offerMessage(b.c, &m)
		b.buf = bytes.Buffer{}
	}
	return n, err
}

// captureConn wraps a stdio Connection so that captures see the responses
// to the requests written under their contexts.
type captureConn struct {
	sdk.Connection
	mu      sync.Mutex
	seq     int64
	pending map[string]pendingCall
}

// pendingCall is a request awaiting its response, numbered in the order
// of writing.
type pendingCall struct {
	cp  *capture
	seq int64
}

// Write sends msg, remembering the capture of a request's context.
func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if cp := captureFrom(ctx); cp != nil {
			id := idKey(req.ID)
			c.mu.Lock()
			c.seq++
			c.pending[id] = pendingCall{cp, c.seq}
			c.mu.Unlock()
			cp.mu.Lock()
			cp.id = id
			cp.forget = func() { c.forget(id) }
			cp.mu.Unlock()
		}
	}
	return c.Connection.Write(ctx, msg)
}

// forget drops the capture waiting for id.
func (c *captureConn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Read reads the next message, filling the capture a response answers
// and passing on the notifications of requests in flight.
func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	switch msg := msg.(type) {
	case *jsonrpc.Response:
		id := idKey(msg.ID)
		c.mu.Lock()
		p, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok {
			p.cp.offer(id, msg.Result, asRPCError(msg.Error))
		}
	case *jsonrpc.Request:
		if !msg.IsCall() {
			c.notify(&wireMessage{Method: msg.Method, Params: msg.Params})
		}
	}
	return msg, err
}

// notify gives a notification to the newest request in flight that takes
// it: stdio has one stream, so log messages cannot be told apart.
func (c *captureConn) notify(m *wireMessage) {
	c.mu.Lock()
	var newest []pendingCall
	for _, p := range c.pending {
		if p.cp.notifier != nil {
			newest = append(newest, p)
		}
	}
	c.mu.Unlock()
	slices.SortFunc(newest, func(a, b pendingCall) int { return cmp.Compare(b.seq, a.seq) })
	for _, p := range newest {
		if p.cp.notify(m) {
			return
		}
	}
}

// asRPCError converts the error of a response read from the wire.
func asRPCError(err error) *mcpgate.RPCError {
	var wire *jsonrpc.Error
	if err == nil || !errors.As(err, &wire) {
		return nil
	}
	return &mcpgate.RPCError{Code: int(wire.Code), Message: wire.Message, Data: wire.Data}
}

// captureTransportIO connects a stdio transport wrapped for captures.
type captureTransportIO struct{ inner sdk.Transport }

// Connect connects the inner transport and wraps its connection.
func (t captureTransportIO) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, pending: map[string]pendingCall{}}, nil
}
