package mcp

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"
)

// A GET stream is open for as long as its client stays, idle most of the
// time. Served on its handler's goroutine, each one kept net/http's state
// of its connection (the buffers, and the goroutine of the background
// read by which net/http learns of a client's leaving) and the handler's
// deep stack for all that time: about 45 KiB of the gateway's memory a
// stream (docs/performance.md, round 23). On HTTP/1.1 a GET stream leaves
// its handler instead: once its head is written, the stream takes its
// connection over, its pump runs on a goroutine of its own and writes the
// events as the chunks of the body, one more goroutine reads the
// connection to learn of the client's leaving, and the handler returns.
// HTTP/2 streams, which cannot be taken over, are pumped by their handler
// as before.

// takeOverStream serves the GET stream st of ls off its handler (see above),
// attaching sk to it after the events up to after, and reports true; it
// reports false, having written nothing, when r's connection cannot be
// taken over, for the caller to serve the stream on the handler's
// goroutine. A client gone before the stream started is left alone.
//
// The connection is closed when the stream ends, as the response's
// Connection field tells the client: a request pipelined behind the GET
// (no client does so) is not served.
func (s *Server) takeOverStream(w http.ResponseWriter, r *http.Request, ls *liveSession, st *stream, sk *connSink, after uint64) bool {
	if !r.ProtoAtLeast(1, 1) || !cuttable(w, r) {
		return false
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Connection", "close") // the stream's end closes it
	startSSE(w)
	if rc.Flush() != nil {
		return true
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		return true
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	sc := &streamConn{conn: conn, timeout: s.writeTimeout}
	ls.active.Add(1) // the stream keeps its session active, as its request did
	st.attach(sk, after)
	pump := func() {
		defer ls.release()
		defer st.detach(sk)
		defer cancel()
		go sc.watch(cancel)
		s.pumpTo(ctx, sc, sk, ls)
	}
	if !s.goTakenOver(pump) {
		pump() // Close has begun: the session has ended, so the pump ends at once
	}
	return true
}

// goTakenOver runs the pump of a stream that took its connection over on a
// goroutine of its own, which Close waits for; it reports false, running
// nothing, once Close has begun.
func (s *Server) goTakenOver(pump func()) bool {
	s.takenMu.Lock()
	defer s.takenMu.Unlock()
	if s.base.Err() != nil {
		return false
	}
	s.taken.Go(pump)
	return true
}

// streamConn is a connection taken over from net/http, whose chunked body
// goes on after what net/http wrote: a GET stream's (takeOverStream), or
// a paused reply's, which only ends it (cutResponse).
type streamConn struct {
	conn    net.Conn
	timeout time.Duration // of each write
}

// write writes events as chunks of the body, in one write bounded by the
// write timeout.
func (sc *streamConn) write(events [][]byte) bool {
	if len(events) == 0 {
		return true // the head went out before the connection was taken over
	}
	var b []byte
	for _, ev := range events {
		b = strconv.AppendInt(b, int64(len(ev)), 16)
		b = append(b, "\r\n"...)
		b = append(b, ev...)
		b = append(b, "\r\n"...)
	}
	return sc.send(b)
}

// end ends the body, unless the connection is gone, and closes the
// connection.
func (sc *streamConn) end() {
	sc.send([]byte(chunkEnd))
	sc.conn.Close()
}

// send writes b within the write timeout.
func (sc *streamConn) send(b []byte) bool {
	if sc.conn.SetWriteDeadline(time.Now().Add(sc.timeout)) != nil {
		return false
	}
	_, err := sc.conn.Write(b)
	return err == nil
}

// watch reads the connection until it fails, which it does when the
// client leaves or end closes it, and then cancels the stream's context. A
// GET stream's client sends nothing more; anything it sends ends the
// stream too.
func (sc *streamConn) watch(cancel context.CancelFunc) {
	var b [1]byte
	_, _ = sc.conn.Read(b[:])
	cancel()
}
