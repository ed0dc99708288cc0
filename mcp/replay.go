package mcp

import "sync"

// What a session keeps for resuming its streams (GET with Last-Event-ID):
// the latest events of all its streams together, so that its memory stays
// bounded however many streams it opens.
const (
	replayEvents = 512     // events kept per session
	replayBytes  = 2 << 20 // bytes kept per session, beyond the latest event
)

// replay is a session's recent SSE events, oldest first, across all its
// streams. It forgets the oldest events beyond the session's limits,
// whichever stream they belong to, but always keeps the latest one.
type replay struct {
	mu     sync.Mutex
	events []event
	size   int
	log    *sessionLog // nil without an EventLog
}

// event is one SSE event of a stream, ready for the wire.
type event struct {
	st   *stream
	seq  uint64
	pos  int64 // in the EventLog (0 without one)
	wire []byte
}

// remember keeps event seq of st.
func (r *replay) remember(st *stream, seq uint64, wire []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pos := r.log.next()
	r.events = append(r.events, event{st: st, seq: seq, pos: pos, wire: wire})
	r.size += len(wire)
	for len(r.events) > 1 && (len(r.events) > replayEvents || r.size > replayBytes) {
		r.size -= len(r.events[0].wire)
		r.events[0] = event{}
		r.events = r.events[1:]
	}
	r.log.record(st, seq, pos, wire, r.events[0].pos)
}

// replayTo queues to sk the events of st that follow seq after. It returns
// false if sk refused one.
func (r *replay) replayTo(sk *connSink, st *stream, after uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.events {
		if ev.st == st && ev.seq > after && !sk.write(ev.wire) {
			return false
		}
	}
	return true
}
