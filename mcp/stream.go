package mcp

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits of a session's streams.
const (
	streamsKept    = 8 // streams kept per session for resumption
	keepAliveEvent = ": keep-alive\n\n"
	// retryMillis is the reconnection delay that priming events advise: a
	// second, the TypeScript SDK client's own first delay.
	retryMillis = "1000"
)

// A stream is one SSE stream of a session: a tools/call reply or a GET
// stream. Its events have ids "<stream>_<seq>", unique across the session's
// streams (and across replicas, through the server's instance prefix). The
// session's replay keeps its latest events so that a client that lost the
// connection can resume with Last-Event-ID; they are delivered to whichever
// connection is attached (its sink). No method blocks on a connection.
type stream struct {
	id     string
	get    bool    // the session's GET stream, not a call's reply
	replay *replay // the session's

	mu     sync.Mutex
	seq    uint64
	sink   *connSink
	closed bool
}

// newStream creates a stream of ls and registers it for resumption.
func (s *Server) newStream(ls *liveSession, get bool) *stream {
	st := &stream{id: s.instance + strconv.FormatUint(s.streamSeq.Add(1), 36), get: get, replay: &ls.replay}
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
	wire := appendEvent(nil, st.eventID(st.seq), msg)
	st.replay.remember(st, st.seq, wire)
	if st.sink != nil && !st.sink.write(wire) {
		st.sink.close()
		st.sink = nil
	}
}

// attach makes sk the stream's connection, after queueing the events that
// follow seq after. A previous connection is told the stream moved on. On a
// closed stream sk is closed after the replay.
func (st *stream) attach(sk *connSink, after uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.replay.replayTo(sk, st, after) || st.closed {
		sk.close()
		return
	}
	if st.sink != nil {
		st.sink.close()
	}
	st.sink = sk
}

// pause ends the stream's connection, if it has one, without ending the
// stream: its later events wait in the replay for a resumption. The
// client is advised to come back after retry (when positive). It reports
// whether a connection was ended.
func (st *stream) pause(retry time.Duration) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.sink == nil {
		return false
	}
	if retry > 0 {
		st.sink.write([]byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n\n"))
	}
	st.sink.close()
	st.sink = nil
	return true
}

// detach forgets sk if it is still the stream's connection.
func (st *stream) detach(sk *connSink) {
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
	if st.sink != nil {
		st.sink.close()
		st.sink = nil
	}
}

// isClosed reports whether the stream was closed.
func (st *stream) isClosed() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.closed
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
// b grows once for a msg of one line, as the gateway's own messages are.
func appendEvent(b []byte, id string, msg []byte) []byte {
	b = slices.Grow(b, len("id: \ndata: \n\n")+len(id)+len(msg))
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
// an id to resume from, the delay before reconnecting (SEP-1699: a client
// whose stream ends before the response resumes it with GET and
// Last-Event-ID after that many milliseconds), and empty data.
func primingEvent(id string) []byte {
	return []byte("id: " + id + "\nretry: " + retryMillis + "\ndata: \n\n")
}

// startSSE writes the headers of an SSE response.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

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

// replaceGet makes st the current GET stream and closes the previous one.
// Closing a stream never blocks, so the session's lock may be held: a GET
// stream is then closed exactly when it stops being the current one.
func (ss *streamSet) replaceGet(st *stream) {
	if ss.get != nil && ss.get != st {
		ss.get.close()
	}
	ss.get = st
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
