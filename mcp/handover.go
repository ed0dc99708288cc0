package mcp

import (
	"context"
	"net/http"
)

// A replica that exits takes its streams' replays with it unless it hands
// them over: HandOver, run by a draining replica once its listener has
// closed, stores each kept stream's events through Peers under the
// stream's id, and a later resumption of that stream on another replica
// (resumeElsewhere) replays them from there.

// handedEvent is one event of a handed-over stream.
type handedEvent struct {
	Seq  uint64 `json:"q"`
	Wire []byte `json:"w"`
}

// handoverKey is where a stream's handover is kept.
func handoverKey(streamID string) string { return "stream:" + streamID }

// HandOver stores the replay of every stream of every session this
// replica holds, for resumptions on other replicas after it exits, and
// returns how many streams it handed over. Without Peers it does nothing.
func (s *Server) HandOver(ctx context.Context) int {
	if s.peers == nil {
		return 0
	}
	s.mu.RLock()
	sessions := make([]*liveSession, 0, len(s.live))
	for _, ls := range s.live {
		sessions = append(sessions, ls)
	}
	s.mu.RUnlock()
	n := 0
	for _, ls := range sessions {
		n += s.handOverSession(ctx, ls)
	}
	return n
}

// handOverSession hands over the streams of one session.
func (s *Server) handOverSession(ctx context.Context, ls *liveSession) int {
	ls.mu.Lock()
	streams := append([]*stream(nil), ls.streams.list...)
	ls.mu.Unlock()
	n := 0
	for _, st := range streams {
		events := ls.replay.of(st)
		if len(events) == 0 {
			continue
		}
		m := &peerMessage{Kind: "handover", From: s.instance, Session: ls.id, Stream: st.id, Known: st.get, Handed: events}
		if b, err := marshalPeer(m); err == nil && s.peers.Send(ctx, handoverKey(st.id), b) == nil {
			n++
		}
	}
	return n
}

// of returns the kept events of st, oldest first.
func (r *replay) of(st *stream) []handedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []handedEvent
	for _, ev := range r.events {
		if ev.st == st {
			out = append(out, handedEvent{Seq: ev.seq, Wire: ev.wire})
		}
	}
	return out
}

// serveHandedOver resumes a stream another replica handed over before it
// exited: its events after after, then, for a GET stream, the session's
// new GET stream here. It reports false when there is no handover.
func (s *Server) serveHandedOver(w http.ResponseWriter, r *http.Request, ls *liveSession, streamID string, after uint64) bool {
	m := s.handedOver(r.Context(), ls, streamID)
	if m == nil {
		return false
	}
	s.serveReplayed(w, r, ls, m.Handed, after, m.Known)
	return true
}

// serveReplayed sends a stream's events that follow after, from another
// replica's handover or the EventLog, then, for a GET stream (get), goes
// on with the session's new GET stream here; a call's reply ends there.
func (s *Server) serveReplayed(w http.ResponseWriter, r *http.Request, ls *liveSession, events []handedEvent, after uint64, get bool) {
	sk := newConnSink()
	for _, ev := range events {
		if ev.Seq > after {
			sk.write(ev.Wire)
		}
	}
	startSSE(w)
	if get { // a GET stream: this replica's goes on from here
		st := s.openGetStream(ls)
		st.attach(sk, 0)
		defer st.detach(sk)
	} else {
		sk.close()
	}
	s.pump(r.Context(), w, sk, ls)
}

// handedOver returns the handover of a stream of ls, nil if there is none.
func (s *Server) handedOver(ctx context.Context, ls *liveSession, streamID string) *peerMessage {
	bodies, err := s.peers.Collect(ctx, handoverKey(streamID))
	if err != nil {
		s.log.Warn("mcp: read a stream handed over", "err", err)
	}
	for _, b := range bodies {
		if m, err := unmarshalPeer(b); err == nil && m.Session == ls.id && m.Stream == streamID {
			return m
		}
	}
	return nil
}
