package mcp

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// What one connection may have queued before its client counts as too slow
// and loses the connection (it can resume the stream): room for a whole
// session's replay and as much live traffic again.
const (
	sinkEvents = 2 * replayEvents
	sinkBytes  = 2 * replayBytes
)

// A connSink is the connection a stream's events currently go to: a queue
// that a pump goroutine writes to the HTTP response. Streams only ever
// queue, so a client that stops reading can block nothing but its own pump,
// and only for the write timeout.
type connSink struct {
	wake chan struct{} // signalled when there is something to take

	mu     sync.Mutex
	queue  [][]byte
	size   int
	closed bool
}

func newConnSink() *connSink { return &connSink{wake: make(chan struct{}, 1)} }

// write queues p without blocking. It returns false when the sink is closed
// or its queue is full, which means that the client is too slow; a single
// event is always taken when nothing is queued.
func (c *connSink) write(p []byte) bool {
	c.mu.Lock()
	ok := !c.closed && (len(c.queue) == 0 || (len(c.queue) < sinkEvents && c.size+len(p) <= sinkBytes))
	if ok {
		c.queue = append(c.queue, p)
		c.size += len(p)
	}
	c.mu.Unlock()
	if ok {
		c.signal()
	}
	return ok
}

// close tells the pump that nothing more will be queued: it writes what is
// queued and ends. It never blocks.
func (c *connSink) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
}

func (c *connSink) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// take empties the queue, reporting whether the sink is closed; when it
// is, what take returns is the last of it.
func (c *connSink) take() ([][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue, c.size = nil, 0
	return q, c.closed
}

// pump writes the events queued in sk to an SSE response, with keep-alive
// comments while it is quiet, until sk is closed and drained, a write fails
// or exceeds the write timeout, or ctx ends. For a GET stream, ls is its
// session: the pump also ends when the session does, which it checks
// against the store while quiet. Once pump returns, sk takes nothing more,
// so the stream drops it, and the response is the caller's again.
func (s *Server) pump(ctx context.Context, w http.ResponseWriter, sk *connSink, ls *liveSession) {
	s.pumpTo(ctx, &sseWriter{w: w, rc: http.NewResponseController(w), timeout: s.writeTimeout}, sk, ls)
}

// eventWriter is where a pump writes a stream's events: an SSE response
// (sseWriter), or the connection of one taken over (streamConn).
type eventWriter interface {
	// write writes events and flushes them to the client; false means
	// the connection is gone or too slow. write(nil) flushes the head.
	write(events [][]byte) bool
	// end ends the writing, once the pump is done.
	end()
}

// pumpTo is pump writing to out.
func (s *Server) pumpTo(ctx context.Context, out eventWriter, sk *connSink, ls *liveSession) {
	s.sse.Add(1)
	defer s.sse.Add(-1)
	defer out.end()
	defer sk.close()
	if !out.write(nil) { // the headers
		return
	}
	var ended <-chan struct{}
	if ls != nil {
		ended = ls.ctx.Done()
	}
	t := time.NewTicker(s.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-sk.wake:
			events, closed := sk.take()
			if !out.write(events) || closed {
				return
			}
			t.Reset(s.keepAlive)
		case <-t.C:
			if !out.write([][]byte{[]byte(keepAliveEvent)}) || (ls != nil && s.ended(ctx, ls)) {
				return
			}
		case <-ctx.Done():
			return
		case <-ended:
			return
		}
	}
}

// sseWriter writes to an SSE response, each write bounded by a deadline so
// that a client that does not read cannot hold the writer forever. A
// ResponseWriter without deadlines (http.ErrNotSupported) is written to
// without one.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// write writes events and flushes them to the client; false means the
// connection is gone or too slow.
func (o *sseWriter) write(events [][]byte) bool {
	for _, ev := range events {
		o.extend()
		if _, err := o.w.Write(ev); err != nil {
			return false
		}
	}
	o.extend()
	return o.rc.Flush() == nil
}

// end leaves room for net/http to end the response: a write timeout from
// now.
func (o *sseWriter) end() { o.extend() }

// extend sets the write deadline one timeout from now.
func (o *sseWriter) extend() {
	o.rc.SetWriteDeadline(time.Now().Add(o.timeout)) //nolint:errcheck // see sseWriter
}
