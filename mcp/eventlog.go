package mcp

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/mcpgate/mcpgate"
)

// A replica killed outright (kill -9) hands nothing over: its streams'
// events survive it only in an EventLog, which writes them to the database
// behind the sends. A resumption whose stream's replica does not answer
// (serveRemote) replays them from there.

// EventLog keeps the events of this replica's streams in the database
// (package peer's EventLog), each session's as far back as its replay here.
type EventLog interface {
	// Record queues ev to be stored, never blocking (an event that finds
	// the queue full is dropped). keepFrom is the position of the oldest
	// event of ev's session this replica still keeps: the stored ones
	// before it may go.
	Record(ev *mcpgate.StreamEvent, keepFrom int64)
	// Events returns the stored events of the stream of session whose
	// sequence number is at least from, in order.
	Events(ctx context.Context, session, stream string, from uint64) ([]*mcpgate.StreamEvent, error)
}

// sessionLog is what a session's replay needs to give its events to the
// EventLog.
type sessionLog struct {
	log              EventLog
	replica, session string
	pos              *atomic.Int64 // the Server's
}

// sessionLog returns the EventLog's end for session, nil without one.
func (s *Server) sessionLog(session string) *sessionLog {
	if s.eventLog == nil {
		return nil
	}
	return &sessionLog{log: s.eventLog, replica: s.instance, session: session, pos: &s.eventPos}
}

// next returns the position of the session's next event (0 on nil).
func (sl *sessionLog) next() int64 {
	if sl == nil {
		return 0
	}
	return sl.pos.Add(1)
}

// record gives an event of st to the EventLog (nothing on nil).
func (sl *sessionLog) record(st *stream, seq uint64, pos int64, wire []byte, keepFrom int64) {
	if sl == nil {
		return
	}
	sl.log.Record(&mcpgate.StreamEvent{Replica: sl.replica, Pos: pos, Session: sl.session, Stream: st.id, Seq: seq, Get: st.get, Wire: wire}, keepFrom)
}

// serveLogged resumes, from the EventLog, a stream whose replica did not
// answer: its stored events after after, then, for a GET stream, the
// session's new GET stream here. It reports false when nothing of the
// stream is stored, having written nothing.
func (s *Server) serveLogged(w http.ResponseWriter, r *http.Request, ls *liveSession, streamID string, after uint64) bool {
	if s.eventLog == nil {
		return false
	}
	evs, err := s.eventLog.Events(r.Context(), ls.id, streamID, after)
	if err != nil {
		s.log.Warn("mcp: read a stream's stored events", "stream", streamID, "err", err)
	}
	if len(evs) == 0 {
		return false
	}
	wires := make([]handedEvent, len(evs))
	for i, ev := range evs {
		wires[i] = handedEvent{Seq: ev.Seq, Wire: ev.Wire}
	}
	s.serveReplayed(w, r, ls, wires, after, evs[0].Get)
	return true
}
