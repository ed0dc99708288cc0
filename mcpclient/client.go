// Package mcpclient is the gateway's own MCP client: one session with an
// upstream MCP server over Streamable HTTP (POST with JSON or SSE replies,
// the GET stream, resumption with Last-Event-ID and retry, session ids,
// DELETE on close) or over stdio (newline-delimited JSON-RPC on a pair of
// pipes). Results, notifications and server→client requests pass through
// as json.RawMessage; the client decodes only the envelope of each
// message, and a notification's progress token to route it.
//
// It is a package of its own rather than a client side in package mcp:
// the server side's framing is tuned to what a client may POST (batches,
// case checks, replay), while a client reads what one server sends, and
// keeping the two apart lets the upstream backend import this without the
// server transport. The package imports the root mcpgate package (for
// mcpgate.RPCError) and the standard library only; it must not import the
// transport (mcp), netguard (the caller passes its *http.Client), stores,
// backends or the server.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// ProtocolVersion is the revision the client asks servers for first: the
// one the gateway serves downstream, with sessions and server→client
// requests.
const ProtocolVersion = "2025-11-25"

// supported reports whether the client speaks protocol version v.
func supported(v string) bool {
	switch v {
	case "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
		return true
	}
	return false
}

// ErrSessionMissing is the error of a request the server answered with
// HTTP 404 for the session id: it no longer knows the session, which has
// ended.
var ErrSessionMissing = errors.New("the upstream no longer knows the session (HTTP 404)")

// ErrClosed is why a session closed by Close ended.
var ErrClosed = errors.New("the session was closed")

// Options configures a session. Nil, or a zero field, gives the default.
type Options struct {
	// Name and Version are the clientInfo of initialize; default
	// "mcpgate" and mcpgate.Version.
	Name, Version string
	// Capabilities are the client capabilities declared; default {}.
	Capabilities json.RawMessage
	// Notify gets the server's notifications that no call in flight
	// takes; optional.
	Notify func(method string, params json.RawMessage)
	// Request answers the server's requests (sampling, elicitation,
	// roots, ping is answered by the client itself). An *mcpgate.RPCError
	// goes back as is; another error as an internal error. Without it a
	// request gets "method not found".
	Request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Logger gets what the client cannot hand to anyone; default
	// slog.Default().
	Logger *slog.Logger
	// Legacy keeps the client to initialize and sessions (ProtocolVersion
	// and older) instead of trying StatelessVersion first.
	Legacy bool
	// LogLevel is the level of log messages asked for on each request of
	// the stateless revision (its _meta logLevel); none when empty.
	LogLevel string
}

// Session is one initialized MCP session. It is safe for concurrent use.
type Session struct {
	t    Transport
	opts Options
	log  *slog.Logger
	init json.RawMessage // the initialize (or server/discover) result
	ver  string
	// stateless is set while the session speaks StatelessVersion.
	stateless bool

	seq     atomic.Int64
	mu      sync.Mutex
	pending map[string]*pending // by id key
	order   int64               // numbers pending calls in order of sending

	ctx     context.Context // ends with the session
	stop    context.CancelFunc
	done    chan struct{}
	endOnce sync.Once
	err     error // why the session ended, once done is closed
}

// CallOptions are the options of one request.
type CallOptions struct {
	// Notify gets the notifications about the request, in order and
	// before it returns: those on its reply stream (HTTP), or, on a
	// transport with one stream for everything (stdio), the progress
	// carrying ProgressToken and the log messages while it is the newest
	// call with a Notify.
	Notify func(method string, params json.RawMessage)
	// ProgressToken is the _meta.progressToken the caller put in params.
	ProgressToken string
	// Paused is told when the server ended the request's reply stream on
	// purpose before answering (SEP-1699), with the retry it advised; the
	// client resumes the stream itself.
	Paused func(retry time.Duration)
	// Header holds more HTTP headers for the request's POST, such as the
	// W3C traceparent; transports other than HTTP ignore it.
	Header http.Header
	// Capabilities are the client capabilities this request declares in
	// the stateless revision (its _meta); default Options.Capabilities.
	// Sessions of older revisions declare theirs once, at initialize.
	Capabilities json.RawMessage
}

// pending is a request awaiting its response.
type pending struct {
	id    string // the request's id, as JSON
	opts  *CallOptions
	order int64
	reply chan reply // buffered, receives one reply
}

// reply is a response to a request: its result, or its error.
type reply struct {
	result json.RawMessage
	err    error
}

// Connect opens a session over t. Over Streamable HTTP it asks for
// StatelessVersion first with server/discover (unless Options.Legacy);
// when the server does not offer it, or over stdio, it initializes,
// negotiating the protocol version (ProtocolVersion first, any version the
// server answers that the client speaks), and sends
// notifications/initialized.
func Connect(ctx context.Context, t Transport, opts *Options) (*Session, error) {
	s := &Session{t: t, pending: map[string]*pending{}, done: make(chan struct{})}
	s.ctx, s.stop = context.WithCancel(context.Background())
	if opts != nil {
		s.opts = *opts
	}
	s.defaults()
	if err := s.t.start(s); err != nil {
		return nil, err
	}
	if s.discover(ctx) {
		return s, nil
	}
	if err := s.initialize(ctx); err != nil {
		s.end(err)
		s.t.close()
		return nil, err
	}
	return s, nil
}

// defaults fills the zero options.
func (s *Session) defaults() {
	if s.opts.Name == "" {
		s.opts.Name = "mcpgate"
	}
	if s.opts.Version == "" {
		s.opts.Version = mcpgate.Version
	}
	if len(s.opts.Capabilities) == 0 {
		s.opts.Capabilities = json.RawMessage("{}")
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
}

// initialize runs the initialize handshake.
func (s *Session) initialize(ctx context.Context) error {
	info, _ := json.Marshal(map[string]string{"name": s.opts.Name, "version": s.opts.Version})
	params := `{"protocolVersion":"` + ProtocolVersion + `","capabilities":` + string(s.opts.Capabilities) + `,"clientInfo":` + string(info) + `}`
	res, err := s.Call(ctx, "initialize", json.RawMessage(params), nil)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("initialize: the result is not an object: %w", err)
	}
	if !supported(r.ProtocolVersion) {
		return fmt.Errorf("initialize: the server speaks protocol version %q, which the client does not", r.ProtocolVersion)
	}
	s.init, s.ver = res, r.ProtocolVersion
	s.t.negotiated(r.ProtocolVersion)
	if err := s.Notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	s.t.initialized()
	return nil
}

// InitializeResult returns the server's initialize result as it sent it.
func (s *Session) InitializeResult() json.RawMessage { return s.init }

// ProtocolVersion returns the negotiated protocol version.
func (s *Session) ProtocolVersion() string { return s.ver }

// Capabilities returns the server's capabilities object, "{}" when it
// sent none.
func (s *Session) Capabilities() json.RawMessage {
	var r struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(s.init, &r) != nil || len(r.Capabilities) == 0 || r.Capabilities[0] != '{' {
		return json.RawMessage("{}")
	}
	return r.Capabilities
}

// Call sends a request and returns its result as the server sent it. A
// JSON-RPC error of the server is an *mcpgate.RPCError. When ctx ends
// first, the server is sent notifications/cancelled and ctx's error comes
// back. opts may be nil.
func (s *Session) Call(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	if s.stateless {
		var err error
		if params, opts, err = s.statelessRequest(method, params, opts); err != nil {
			return nil, err
		}
	}
	// A reply comes only through resolve, which takes p off the pending
	// requests: p is forgotten here only on the ways out that took none.
	p := s.register(opts)
	msg := appendRequest(make([]byte, 0, len(p.id)+len(method)+len(params)+48), p.id, method, params)
	if err := s.t.send(ctx, msg, p); err != nil {
		s.forget(p)
		if errors.Is(err, ErrSessionMissing) || s.versionRefused(err) {
			s.end(err)
		}
		select {
		case r := <-p.reply: // the answer came before the failure
			return r.result, r.err
		default:
		}
		return nil, s.callError(ctx, p, err)
	}
	select {
	case r := <-p.reply: // most often there already: the POST's reply had the answer
		return r.result, r.err
	default:
	}
	select {
	case r := <-p.reply:
		return r.result, r.err
	case <-ctx.Done():
		s.forget(p)
		s.cancelled(p, ctx.Err())
		return nil, ctx.Err()
	case <-s.done:
		s.forget(p)
		select {
		case r := <-p.reply:
			return r.result, r.err
		default:
		}
		return nil, s.err
	}
}

// callError is what a call whose sending failed, with no answer, returns:
// ctx's error once ctx ended (the server is told), err otherwise.
func (s *Session) callError(ctx context.Context, p *pending, err error) error {
	if ctx.Err() != nil {
		s.cancelled(p, ctx.Err())
		return ctx.Err()
	}
	return err
}

// cancelled tells the server, in the background, that the request p was
// given up.
func (s *Session) cancelled(p *pending, cause error) {
	if s.stateless {
		return // closing the request's stream was the cancellation
	}
	params := `{"requestId":` + p.id + `,"reason":` + strconv.Quote(cause.Error()) + `}`
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Notify(ctx, "notifications/cancelled", json.RawMessage(params))
	}()
}

// Notify sends a notification. The stateless revision has none a client
// sends (closing a request's stream cancels it), so there it sends
// nothing.
func (s *Session) Notify(ctx context.Context, method string, params json.RawMessage) error {
	if s.stateless {
		return nil
	}
	return s.t.send(ctx, appendNotification(nil, method, params), nil)
}

// register adds a request awaiting its response, with a new id.
func (s *Session) register(opts *CallOptions) *pending {
	id := strconv.FormatInt(s.seq.Add(1), 10)
	p := &pending{id: id, opts: opts, reply: make(chan reply, 1)}
	s.mu.Lock()
	s.order++
	p.order = s.order
	s.pending[id] = p
	s.mu.Unlock()
	return p
}

// forget drops a request that returned.
func (s *Session) forget(p *pending) {
	s.mu.Lock()
	delete(s.pending, p.id)
	s.mu.Unlock()
}

// Done is closed once the session has ended; Err says why.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended, nil while it has not.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// end ends the session with err, once.
func (s *Session) end(err error) {
	s.endOnce.Do(func() {
		s.err = err
		close(s.done)
		s.stop()
	})
}

// Close ends the session: over HTTP it sends DELETE for the session id,
// over stdio it closes the server's stdin.
func (s *Session) Close() error {
	s.end(ErrClosed)
	return s.t.close()
}
