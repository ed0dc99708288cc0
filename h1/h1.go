// Package h1 is the gateway's own HTTP/1.1 for plain-HTTP connections: a
// server for the common requests (Server, server.go: a POST with a
// Content-Length and plain header fields, every other connection handed to
// net/http), and a client transport with keep-alive, for plain http://
// URLs: each request is written and its response read on the
// caller's goroutine, over a pooled connection, where net/http's Transport
// hands every request to a connection's writeLoop and every response from
// its readLoop (two goroutine hand-offs per request, which a relayed call
// pays on every call). Requests to other schemes, and requests it does not
// handle (bodies of unknown length, Expect: 100-continue, trailers), go to
// the Next transport, so HTTPS keeps net/http's TLS and HTTP/2.
//
// The head of a common response (HTTP/1.1, a Content-Length or chunked
// body, plain header fields), whole in the connection's buffer after one
// read, is parsed where it lies, with a few allocations for the Response
// and its Header, and its body framed here (net/http's chunked reader
// for chunks); any other response is read by http.ReadResponse, from its
// start (readResponse; FuzzReadResponse holds the two together).
//
// Connections come from the Dial function, which is where the SSRF guard
// checks every address (netguard). An idle connection the server closed
// is noticed before reuse (Linux: a peek that does not wait) and dropped;
// a request that a kept-alive connection still loses before its answer
// (the server's close crossed it) is sent again on a new connection when
// it may be sent twice, as net/http decides (a GET, HEAD, OPTIONS or
// TRACE, or one with an idempotency key header; its body made again).
// Post sends a POST as RoundTrip would, with its header fields given as
// text and only the reply's status, a few of its fields and its body read
// back: no http.Request, http.Response or Header is made (an MCP client's
// messages, relayed on every call, go so).
// A response body whose caller needs no more of it can be parked (Park):
// its connection waits in the pool and its rest is read before the next
// request once it has come, with no goroutine waiting for it meanwhile.
// A request's context ends its exchange (its connection is closed), but
// it is watched (context.AfterFunc) only once the exchange has run 5 to
// 10 ms (ctxwatch.go): an exchange answered sooner asks its context for
// nothing but its Err.
//
// On Linux both sides move a TCP connection's bytes through connIO
// (connio_linux.go): system calls the runtime is not told about, so that
// its monitor thread is not woken on every call.
//
// The package imports only the standard library.
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Defaults of a Transport.
const (
	defaultMaxIdlePerHost = 64
	defaultIdleTimeout    = 90 * time.Second
)

// Transport is an http.RoundTripper for http:// URLs over keep-alive
// connections. Its zero value is not usable: Dial and Next are required.
// It is safe for concurrent use.
type Transport struct {
	// Dial opens a connection to addr (host:port) on network "tcp".
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Next serves what this transport does not: other schemes and the
	// requests listed in the package doc.
	Next http.RoundTripper
	// MaxIdlePerHost is how many idle connections are kept per host
	// (default 64); IdleTimeout how long one is kept (default 90 s).
	MaxIdlePerHost int
	IdleTimeout    time.Duration

	mu   sync.Mutex
	idle map[string][]*conn // by host:port, most recently used last

	// The exchanges' context watch (ctxwatch.go), under wmu: the listed
	// exchanges, whether watchLoop runs, and its looks so far.
	wmu      sync.Mutex
	watched  *ctxWatch
	watching bool
	looks    uint64
	// watchStarts counts the starts of watchLoop, watchEnds its ends,
	// afterFuncs the exchanges it watched (for tests).
	watchStarts, watchEnds, afterFuncs int
}

var _ http.RoundTripper = (*Transport)(nil)

// conn is one connection and its buffers.
type conn struct {
	nc     net.Conn
	lim    headLimit // under br: bounds a response head's bytes
	br     *bufio.Reader
	bw     *bufio.Writer
	addr   string
	idleAt time.Time
	reused bool
	peek   *peeker  // made at the first reuse (alive)
	closer func()   // closes nc; made once, for each request's context watch
	watch  ctxWatch // the context watch of the exchange on the connection
	// rest is the unread end of a parked body (Park), read before the
	// next request once it has come; restBy ends the wait for a rest
	// that has not come.
	rest   io.Reader
	restBy time.Time
}

// RoundTrip sends req and returns its response, whose body must be read
// to its end (the connection then goes back to the pool) or closed (the
// connection is then closed). Cancelling the request's context closes the
// connection, which ends a read or write under way.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.handles(req) {
		return t.Next.RoundTrip(req)
	}
	if err := checkHeader(req.Header); err != nil {
		closeBody(req)
		return nil, err
	}
	addr := hostPort(req.URL)
	for {
		c, err := t.conn(req.Context(), addr)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.try(req, c)
		if err == nil || !c.reused || !lostIdle(err) || !replayable(req) {
			return resp, err
		}
		// The server closed the kept-alive connection as the request
		// went out; net/http sends such a request again on a new
		// connection when it can be sent twice, and so does h1.
		if req, err = rewind(req); err != nil {
			return nil, err
		}
	}
}

// try makes one exchange of req on c. The response's body gives c back
// to the pool at its end; a failure closes c.
func (t *Transport) try(req *http.Request, c *conn) (*http.Response, error) {
	stop := t.watch(req.Context(), c)
	b := &body{ctx: req.Context()}
	resp, err := c.exchange(req, &b.fr)
	if err != nil {
		return nil, abandon(req.Context(), c, stop, err)
	}
	t.wrapBody(resp, b, c, stop, req.Close)
	return resp, nil
}

// abandon ends an exchange on c that failed with err: its context's
// watch stops and c is closed. It returns ctx's error when ctx has ended
// (its watch closed c under the exchange), err otherwise.
func abandon(ctx context.Context, c *conn, stop watchTicket, err error) error {
	stop.stop()
	c.nc.Close()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

// handles reports whether the transport serves req itself.
func (t *Transport) handles(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.URL.User != nil {
		return false
	}
	hasBody := req.Body != nil && req.Body != http.NoBody
	if hasBody && req.ContentLength <= 0 {
		return false // unknown length: chunked uploads are Next's
	}
	return req.Trailer == nil && req.Header.Get("Expect") == ""
}

// hostPort is u's host with its port, 80 by default. A host that names
// its port is already that (brackets of IPv6 included), without a copy.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// closeBody closes a request's body, as a RoundTripper must even on
// failure.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// errHeader is a request header that cannot go on the wire as it is.
var errHeader = errors.New("h1: invalid header name or value")

// checkHeader refuses what net/http's transport refuses: a header name
// that is not an RFC 9110 token, and a value with a control character
// other than a tab (CR and LF would break the request's framing).
func checkHeader(h http.Header) error {
	for k, vs := range h {
		if !validName(k) {
			return fmt.Errorf("%w: %q", errHeader, k)
		}
		for _, v := range vs {
			if !validValue(v) {
				return fmt.Errorf("%w: %s", errHeader, k)
			}
		}
	}
	return nil
}

// validName reports whether k (a Header's key, or a field's name that
// Post is given) is a token: one or more of RFC 9110's tchar, the bytes
// the response-head parser takes in a name (field.go).
func validName[S ~string | ~[]byte](k S) bool {
	if len(k) == 0 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !tokenByte(k[i]) {
			return false
		}
	}
	return true
}

// validValue reports whether v holds only the bytes a field value may:
// no control character but tabs (field.go's valueByte).
func validValue[S ~string | ~[]byte](v S) bool {
	for i := 0; i < len(v); i++ {
		if !valueByte(v[i]) {
			return false
		}
	}
	return true
}

// Idle returns how many connections wait in the pool.
func (t *Transport) Idle() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, cs := range t.idle {
		n += len(cs)
	}
	return n
}

// CloseIdleConnections closes the connections that wait in the pool.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	if ci, ok := t.Next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
