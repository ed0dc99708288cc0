package mcp

import (
	"net/http"
	"time"
)

// A paused reply (callReply.PauseStream) must end its HTTP response while
// its request goes on. net/http ends a response when the handler returns,
// which a request running on the handler's goroutine cannot do before it
// has its result; on HTTP/1.x the reply can end the response itself
// instead: it takes the connection over, writes the end of the chunked
// body and closes the connection. That keeps every request on its
// handler's goroutine (no goroutine, channel or fresh stack per call);
// only replies that may pause on another connection (HTTP/2) pay for a
// goroutine of their own (Server.servePausable).

// chunkEnd ends an HTTP/1.1 chunked body without trailers.
const chunkEnd = "0\r\n\r\n"

// cuttable reports whether cutResponse can end r's response: an HTTP/1.x
// request whose ResponseWriter, or one it wraps, can be hijacked.
func cuttable(w http.ResponseWriter, r *http.Request) bool {
	if r.ProtoMajor != 1 {
		return false
	}
	for {
		switch u := w.(type) {
		case http.Hijacker:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return false
		}
	}
}

// cutResponse ends r's response, whose headers and body so far are
// written and flushed, before the handler returns: it hijacks the
// connection, ends the chunked body (an HTTP/1.0 body ends with the
// connection) and closes the connection, which net/http then leaves
// alone. The handler must not write to w afterwards. A connection already
// gone is only closed.
func cutResponse(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if !r.ProtoAtLeast(1, 1) {
		conn.Close()
		return
	}
	(&streamConn{conn: conn, timeout: timeout}).end()
}
