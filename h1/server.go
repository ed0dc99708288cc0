package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves the common requests of plain HTTP/1.1 connections on the
// caller's handler itself, and hands every other connection to net/http:
// a POST with one Host, a Content-Length and plain header fields, whose
// head is whole in the connection's 4 KiB buffer, is served here; at the
// first request of any other kind (a GET stream, a chunked upload, an
// Expect, HTTP/1.0, a head net/http might read differently) the
// connection, with every byte read from it so far, goes to the listener
// that Handover returns, which an http.Server serves. A connection is
// handed over only between requests, so each request is read whole by
// one of the two.
//
// What it saves over net/http's server is the per-request work around
// the handler: above all the background read net/http starts on every
// request (a goroutine, a read that finds nothing, and two deadline
// changes and wake-ups to end it), which is how a client's disconnect
// ends a request's context. Here a request that runs longer than
// watchAfter starts that read (watch.go), so a disconnect still cancels
// a slow request's context, and a fast one pays for a lock and a clock
// read.
//
// The ResponseWriter answers as net/http's does (a body of up to 2 KiB
// written before the handler returns gets a Content-Length, a longer or
// flushed one is chunked, Date and a sniffed Content-Type are added) and
// supports http.Flusher, http.Hijacker and http.ResponseController's
// deadlines. Trailers are not supported.
type Server struct {
	Handler http.Handler
	// ReadHeaderTimeout bounds the reading of a request's head (default
	// 10 s), IdleTimeout the wait for the next request (default 2 min;
	// a connection may wait from three quarters of it to all of it).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// ErrorLog logs handler panics and accept errors; nil means the log
	// package's standard logger.
	ErrorLog *log.Logger

	down     atomic.Bool // set at Shutdown, before its lock: setActive and track see it under theirs
	served   atomic.Int64
	handed   atomic.Int64
	mu       sync.Mutex
	lns      map[net.Listener]struct{}
	conns    map[*serverConn]bool // true while serving a request
	watching bool                 // watchLoop runs
	handover *handover
	// watchStarts counts the starts of watchLoop, watchEnds its ends
	// (for tests).
	watchStarts, watchEnds int
}

// Defaults and bounds of a Server.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultServerIdle        = 2 * time.Minute
	serverBufSize            = 4 << 10
	// maxDiscard is the most of an unread request body read and dropped
	// to keep the connection; a longer rest closes it (as net/http).
	maxDiscard = 256 << 10
	// rstAvoidance is how long a connection closed with a body unread
	// waits after its write side is shut, so that the client reads the
	// response before the reset (as net/http).
	rstAvoidance = 500 * time.Millisecond
)

// Handover returns the listener of the connections the server hands
// over; serve it with an http.Server whose Handler is the same. Its
// Accept fails once the http.Server closes it (at its Shutdown); a
// connection handed over after that is closed.
func (s *Server) Handover() net.Listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handover == nil {
		s.handover = newHandover()
	}
	return s.handover
}

// Served returns how many requests the server served itself.
func (s *Server) Served() int64 { return s.served.Load() }

// HandedOver returns how many connections the server handed to net/http.
func (s *Server) HandedOver() int64 { return s.handed.Load() }

// Serve accepts connections on ln and serves them until Shutdown, when it
// returns http.ErrServerClosed, or until ln fails otherwise.
func (s *Server) Serve(ln net.Listener) error {
	s.Handover() // made before any connection needs it
	if !s.track(ln) {
		return http.ErrServerClosed
	}
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logf("h1: accept error: %v; retrying in %v", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		c := newServerConn(s, nc)
		if !s.add(c) {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

// Shutdown stops accepting, closes the idle connections, and waits for
// the requests being served to end, or for ctx. The connections handed
// over are the http.Server's to shut down.
func (s *Server) Shutdown(ctx context.Context) error {
	s.down.Store(true)
	s.mu.Lock()
	for ln := range s.lns {
		ln.Close()
	}
	s.lns = nil
	s.mu.Unlock()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.closeIdle() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// closeIdle closes the connections waiting for a request and returns how
// many connections are left.
func (s *Server) closeIdle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, active := range s.conns {
		if !active {
			c.nc.Close()
			delete(s.conns, c)
		}
	}
	return len(s.conns)
}

// track adds a listener for Shutdown to close.
func (s *Server) track(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down.Load() {
		return false
	}
	if s.lns == nil {
		s.lns = make(map[net.Listener]struct{})
	}
	s.lns[ln] = struct{}{}
	return true
}

// closing reports whether Shutdown was called.
func (s *Server) closing() bool { return s.down.Load() }

// add tracks a new connection as idle.
func (s *Server) add(c *serverConn) bool {
	return s.setActive(c, false)
}

// setActive marks c as serving a request or waiting for one; it reports
// false once the server is shutting down and c is not serving, when c
// must close.
func (s *Server) setActive(c *serverConn, active bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down.Load() && !active {
		delete(s.conns, c)
		return false
	}
	if s.conns == nil {
		s.conns = make(map[*serverConn]bool)
	}
	s.conns[c] = active
	if active && !s.watching {
		s.watching = true
		s.watchStarts++
		go s.watchLoop()
	}
	return true
}

// remove forgets c: it closed, was hijacked or was handed over.
func (s *Server) remove(c *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// logf logs to ErrorLog.
func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// serverConn is one connection the server serves.
type serverConn struct {
	s      *Server
	nc     net.Conn
	cr     connReader
	br     *bufio.Reader // over cr
	bw     *bufio.Writer
	remote string
	head   requestHead
	w      watch
	// Buffers of the response being written: its head, and the body
	// written before the head goes out.
	headBuf []byte
	bodyBuf []byte
	dateBuf []byte
	dateAt  int64 // the Unix second dateBuf holds
	// readBy is the read deadline set on nc, zero for none or unknown
	// (setReadBy).
	readBy time.Time
}

// setReadBy sets nc's read deadline.
func (c *serverConn) setReadBy(t time.Time) {
	c.nc.SetReadDeadline(t)
	c.readBy = t
}

// date returns the Date field's value of now, made once a second.
func (c *serverConn) date() []byte {
	now := time.Now()
	if sec := now.Unix(); sec != c.dateAt || c.dateBuf == nil {
		c.dateBuf = now.UTC().AppendFormat(c.dateBuf[:0], http.TimeFormat)
		c.dateAt = sec
	}
	return c.dateBuf
}

// newServerConn makes the state of a new connection.
func newServerConn(s *Server, nc net.Conn) *serverConn {
	c := &serverConn{s: s, nc: nc, remote: nc.RemoteAddr().String()}
	fio := newConnIO(nc)
	c.cr.r = fio
	c.br = bufio.NewReaderSize(&c.cr, serverBufSize)
	c.bw = bufio.NewWriterSize(fio, serverBufSize)
	c.bodyBuf = make([]byte, 0, 2<<10)
	c.w.c = c
	return c
}

// serve serves c's requests until it closes, is handed over or hijacked.
func (c *serverConn) serve() {
	keep := false
	defer func() {
		if !keep {
			c.s.remove(c)
			c.nc.Close()
		}
	}()
	for {
		if !c.s.setActive(c, false) || !c.waitRequest() || !c.s.setActive(c, true) {
			return
		}
		n, ok := c.readHead()
		if n < 0 {
			return
		}
		if !ok {
			keep = true
			c.s.remove(c)
			c.s.handed.Add(1)
			c.s.handover.give(&replayConn{Conn: c.nc, br: c.br})
			return
		}
		var hijacked bool
		if hijacked, ok = c.serveRequest(n); hijacked {
			keep = true
			c.s.remove(c)
			return
		}
		if !ok {
			return
		}
	}
}

// waitRequest waits, for at most the idle timeout, for the first byte of
// the next request. The deadline is moved only once a quarter of the
// timeout has passed since it was set (so the wait is at least three
// quarters of it): a deadline set per request is a change to the
// runtime's timers on every request's path.
func (c *serverConn) waitRequest() bool {
	idle := c.s.IdleTimeout
	if idle <= 0 {
		idle = defaultServerIdle
	}
	if now := time.Now(); c.readBy.IsZero() || c.readBy.Sub(now) < idle*3/4 {
		c.setReadBy(now.Add(idle))
	}
	_, err := c.br.Peek(1)
	return err == nil
}

// readHead reads the next request's head into c.head and returns its
// length, and whether the server serves it; -1 means the connection
// failed or timed out before the head was whole.
func (c *serverConn) readHead() (int, bool) {
	waited := false
	for {
		buf, _ := c.br.Peek(c.br.Buffered())
		if n := headEnd(buf); n > 0 {
			if waited {
				c.setReadBy(time.Time{})
			}
			return n, c.head.parse(buf[:n])
		}
		if len(buf) == c.br.Size() {
			return 0, false // a long head: net/http's to read
		}
		if !waited {
			t := c.s.ReadHeaderTimeout
			if t <= 0 {
				t = defaultReadHeaderTimeout
			}
			c.setReadBy(time.Now().Add(t))
			waited = true
		}
		if _, err := c.br.Peek(len(buf) + 1); err != nil {
			return -1, false
		}
	}
}

// serveRequest serves the request whose head, n bytes long, is in
// c.head. It reports whether the handler hijacked the connection, and
// whether the connection may serve another request.
func (c *serverConn) serveRequest(n int) (hijacked, keep bool) {
	if int64(c.br.Buffered()-n) < c.head.length && !c.readBy.IsZero() {
		c.setReadBy(time.Time{}) // the body's reads are not bounded
	}
	c.br.Discard(n)
	c.s.served.Add(1)
	ctx, cancel := context.WithCancelCause(context.Background())
	body := &requestBody{c: c, n: c.head.length}
	req := c.head.request(ctx, c.remote, body)
	w := &response{c: c, req: req, body: body, cancel: cancel, header: make(http.Header), length: -1, buf: c.bodyBuf[:0]}
	c.w.cancel = cancel
	if c.head.length == 0 {
		c.w.arm()
	}
	ok := c.runHandler(w, req)
	cancel(context.Canceled)
	if w.hijacked {
		return true, false
	}
	c.w.disarm()
	if !ok {
		return false, false
	}
	keep = w.finish()
	body.Close()
	if w.deadline {
		c.nc.SetWriteDeadline(time.Time{})
		c.readBy = time.Time{} // the handler may have set it too
	}
	if !keep {
		body.closeConn()
	}
	return false, keep && c.w.clientStayed()
}

// runHandler runs the handler, recovering from its panic as net/http
// does: a panic other than http.ErrAbortHandler is logged with its stack,
// and either way the connection closes without the rest of the response.
func (c *serverConn) runHandler(w *response, req *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				c.s.logf("http: panic serving %v: %v\n%s", c.remote, p, buf)
			}
			ok = false
		}
	}()
	c.s.Handler.ServeHTTP(w, req)
	return true
}

// connReader reads the connection (through r, its connIO), after a byte
// the disconnect watch read (a pipelined request's first).
type connReader struct {
	r    io.Reader
	one  [1]byte
	has1 bool
}

// Read reads the watch's byte first, if it read one.
func (r *connReader) Read(p []byte) (int, error) {
	if r.has1 && len(p) > 0 {
		p[0], r.has1 = r.one[0], false
		return 1, nil
	}
	return r.r.Read(p)
}
