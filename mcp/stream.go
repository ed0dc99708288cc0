package mcp

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What a session keeps for resuming streams (GET with Last-Event-ID).
const (
	replayEvents   = 64      // events kept per stream
	replayBytes    = 1 << 20 // bytes kept per stream, beyond the last event
	streamsKept    = 8       // streams kept per session
	sinkQueue      = 128     // events queued for a GET connection
	keepAliveEvent = ": keep-alive\n\n"
)

// A stream is one SSE stream of a session: a tools/call reply or a GET
// stream. Its events have ids "<stream>_<seq>", unique across the session's
// streams (and across replicas, through the server's instance prefix). It
// keeps its latest events so that a client that lost the connection can
// resume with Last-Event-ID; they are delivered to whichever connection is
// attached (its sink).
type stream struct {
	id  string
	get bool // the session's GET stream, not a call's reply

	mu       sync.Mutex
	seq      uint64
	buf      []event
	bufBytes int
	sink     sink
	closed   bool
	timer    *time.Timer // keep-alive pings for a direct sink
	every    time.Duration
}

// event is one SSE event, ready for the wire.
type event struct {
	seq  uint64
	wire []byte
}

// A sink is the connection a stream's events currently go to.
type sink interface {
	// write sends one event or comment; false means the connection is gone
	// (or too slow) and the sink must be dropped.
	write(p []byte) bool
	// close tells the connection that the stream will send nothing more.
	close()
}

// newStream creates a stream of ls and registers it for resumption.
func (s *Server) newStream(ls *liveSession, get bool) *stream {
	st := &stream{id: s.instance + strconv.FormatUint(s.streamSeq.Add(1), 36), get: get, every: s.keepAlive}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.streams.add(st)
	return st
}

// emit sends one JSON-RPC message as the stream's next event.
func (st *stream) emit(msg []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.seq++
	ev := event{seq: st.seq, wire: appendEvent(nil, st.eventID(st.seq), msg)}
	st.remember(ev)
	st.send(ev.wire)
}

// send writes p to the sink, dropping a sink that fails. st.mu must be held.
func (st *stream) send(p []byte) {
	if st.sink != nil && !st.sink.write(p) {
		st.sink.close()
		st.sink = nil
	}
	if st.timer != nil {
		st.timer.Reset(st.every)
	}
}

// remember keeps ev for replay, forgetting the oldest events beyond the
// limits but always keeping the latest. st.mu must be held.
func (st *stream) remember(ev event) {
	st.buf = append(st.buf, ev)
	st.bufBytes += len(ev.wire)
	for len(st.buf) > 1 && (len(st.buf) > replayEvents || st.bufBytes > replayBytes) {
		st.bufBytes -= len(st.buf[0].wire)
		st.buf[0] = event{}
		st.buf = st.buf[1:]
	}
}

// attach makes sk the stream's connection, after replaying the events that
// follow seq after. A previous connection is told the stream moved on. On a
// closed stream sk is closed after the replay.
func (st *stream) attach(sk sink, after uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, ev := range st.buf {
		if ev.seq > after && !sk.write(ev.wire) {
			sk.close()
			return
		}
	}
	if st.closed {
		sk.close()
		return
	}
	if st.sink != nil {
		st.sink.close()
	}
	st.sink = sk
}

// detach forgets sk if it is still the stream's connection.
func (st *stream) detach(sk sink) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sink == sk {
		st.sink = nil
	}
}

// close ends the stream: nothing more is sent, and its connection is told.
func (st *stream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.closed = true
	if st.timer != nil {
		st.timer.Stop()
	}
	if st.sink != nil {
		st.sink.close()
		st.sink = nil
	}
}

// keepAlive pings a quiet direct connection; it runs from st.timer.
func (st *stream) keepAlive() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.closed {
		st.send([]byte(keepAliveEvent))
	}
}

func (st *stream) eventID(seq uint64) string {
	return st.id + "_" + strconv.FormatUint(seq, 10)
}

// parseEventID splits an event id into its stream and sequence number.
func parseEventID(id string) (streamID string, seq uint64, ok bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(id[i+1:], 10, 64)
	return id[:i], seq, err == nil
}

// appendEvent appends an SSE event. msg is JSON, whose line breaks can only
// be whitespace between tokens, so each line becomes its own data field.
func appendEvent(b []byte, id string, msg []byte) []byte {
	b = append(b, "id: "...)
	b = append(b, id...)
	b = append(b, '\n')
	for len(msg) > 0 {
		line := msg
		if i := bytes.IndexAny(msg, "\r\n"); i >= 0 {
			line, msg = msg[:i], msg[i+1:]
		} else {
			msg = nil
		}
		if len(line) > 0 {
			b = append(b, "data: "...)
			b = append(b, line...)
			b = append(b, '\n')
		}
	}
	return append(b, '\n')
}

// primingEvent is the event that opens a stream on 2025-11-25 and later:
// an id to resume from, and empty data.
func primingEvent(id string) []byte {
	return []byte("id: " + id + "\ndata: \n\n")
}

// startSSE writes the headers of an SSE response.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// directSink writes events straight to the HTTP response of the request
// that opened the stream.
type directSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (d *directSink) write(p []byte) bool {
	if _, err := d.w.Write(p); err != nil {
		return false
	}
	return d.rc.Flush() == nil
}

// close does nothing: the request's handler ends the response itself.
func (d *directSink) close() {}

// chanSink queues events for a GET connection, whose handler writes them.
type chanSink struct {
	ch chan []byte
}

func newChanSink() *chanSink { return &chanSink{ch: make(chan []byte, sinkQueue)} }

// write queues p without blocking; a full queue means a stalled client.
func (c *chanSink) write(p []byte) bool {
	select {
	case c.ch <- p:
		return true
	default:
		return false
	}
}

func (c *chanSink) close() { close(c.ch) }

// streamSet is a session's streams kept for resumption, oldest first, and
// its current GET stream.
type streamSet struct {
	list []*stream
	get  *stream
}

// add keeps st, forgetting the oldest stream beyond streamsKept.
func (ss *streamSet) add(st *stream) {
	ss.list = append(ss.list, st)
	if len(ss.list) > streamsKept {
		ss.list[0] = nil
		ss.list = ss.list[1:]
	}
}

// find returns the kept stream with the given id, or nil.
func (ss *streamSet) find(id string) *stream {
	for _, st := range ss.list {
		if st.id == id {
			return st
		}
	}
	return nil
}

// take empties the set and returns its streams, to be closed.
func (ss *streamSet) take() []*stream {
	streams := ss.list
	if ss.get != nil {
		streams = append(streams, ss.get)
	}
	ss.list, ss.get = nil, nil
	return streams
}
