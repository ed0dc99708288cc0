package mcp

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// resumeWait bounds how long a resumption waits for the replica holding the
// stream to answer; without an answer (that replica is gone) the client
// gets a new GET stream, as when a stream is no longer kept.
const resumeWait = 3 * time.Second

// serveRemote resumes, for a GET with Last-Event-ID, a stream held by
// replica owner: it asks owner for the events that follow after and relays
// them, and owner's later events, until the stream ends or the client goes.
// When owner does not answer (it died), the stream's events stored in
// the EventLog are replayed instead. It reports false when owner no longer
// keeps the stream, or did not answer and nothing is stored, having
// written nothing.
func (s *Server) serveRemote(w http.ResponseWriter, r *http.Request, ls *liveSession, owner, streamID string, after uint64) bool {
	rid := randomHex(8)
	ch := s.remotes.expect(rid)
	defer s.remotes.forget(rid)
	s.sendPeer(owner, &peerMessage{Kind: peerResume, Session: ls.id, Stream: streamID, After: after, Resume: rid})
	select {
	case m := <-ch:
		if !m.Known {
			return false
		}
	case <-time.After(resumeWait):
		return s.serveLogged(w, r, ls, streamID, after)
	case <-r.Context().Done():
		return true
	}
	defer s.sendPeer(owner, &peerMessage{Kind: peerDetach, Resume: rid})
	sk := newConnSink()
	go relayRemote(r.Context(), ch, sk)
	startSSE(w)
	s.pump(r.Context(), w, sk, ls)
	return true
}

// relayRemote queues the events that arrive on ch until the stream ends
// there, the sink closes or ctx ends.
func relayRemote(ctx context.Context, ch <-chan *peerMessage, sk *connSink) {
	for {
		select {
		case m := <-ch:
			if len(m.Events) > 0 && !sk.write(m.Events) || m.Closed {
				sk.close()
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// feedRemote serves another replica's resumption of a stream this replica
// holds: it attaches a sink to the stream, as a GET here would, and sends
// what the sink gets to that replica until the stream ends, the session
// ends, or the other replica detaches.
func (s *Server) feedRemote(m *peerMessage) {
	reply := &peerMessage{Kind: peerEvents, Resume: m.Resume}
	ls := s.liveSession(m.Session)
	var st *stream
	if ls != nil {
		st, _ = s.resumable(ls, m.Stream+"_"+strconv.FormatUint(m.After, 10))
	}
	if st == nil {
		s.sendPeer(m.From, reply)
		return
	}
	reply.Known = true
	s.sendPeer(m.From, reply)
	sk := newConnSink()
	s.remotes.feed(m.Resume, sk)
	st.attach(sk, m.After)
	go s.forward(ls, st, sk, m.From, m.Resume)
}

// forward sends what sk gets to replica to, batching what queued
// meanwhile, until sk closes or the session ends.
func (s *Server) forward(ls *liveSession, st *stream, sk *connSink, to, rid string) {
	defer s.remotes.stopFeed(rid)
	defer st.detach(sk)
	for {
		select {
		case <-sk.wake:
			events, closed := sk.take()
			var b []byte
			for _, ev := range events {
				b = append(b, ev...)
			}
			if len(b) > 0 || closed {
				s.sendPeer(to, &peerMessage{Kind: peerEvents, Resume: rid, Known: true, Events: b, Closed: closed})
			}
			if closed {
				return
			}
		case <-ls.ctx.Done():
			s.sendPeer(to, &peerMessage{Kind: peerEvents, Resume: rid, Known: true, Closed: true})
			return
		}
	}
}

// expect registers a resumption this replica serves.
func (rs *remoteSet) expect(rid string) chan *peerMessage {
	ch := make(chan *peerMessage, 64)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.in == nil {
		rs.in = make(map[string]chan *peerMessage)
	}
	rs.in[rid] = ch
	return ch
}

// forget unregisters a resumption this replica serves.
func (rs *remoteSet) forget(rid string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.in, rid)
}

// route passes events to the resumption they belong to. A resumption
// that falls 64 messages behind loses the stream (its client resumes).
func (rs *remoteSet) route(m *peerMessage) {
	rs.mu.Lock()
	ch := rs.in[m.Resume]
	rs.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- m:
	default:
		select {
		case ch <- &peerMessage{Known: true, Closed: true}:
		default:
		}
	}
}

// feed registers the sink of a resumption this replica feeds.
func (rs *remoteSet) feed(rid string, sk *connSink) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.out == nil {
		rs.out = make(map[string]*connSink)
	}
	rs.out[rid] = sk
}

// stopFeed closes and unregisters the sink of a resumption this replica
// feeds, if it still does.
func (rs *remoteSet) stopFeed(rid string) {
	rs.mu.Lock()
	sk := rs.out[rid]
	delete(rs.out, rid)
	rs.mu.Unlock()
	if sk != nil {
		sk.close()
	}
}

// resumeElsewhere serves a resumption of a stream another replica holds,
// reporting false when lastEventID names none or that replica does not
// resume it.
func (s *Server) resumeElsewhere(w http.ResponseWriter, r *http.Request, ls *liveSession, lastEventID string) bool {
	id, seq, ok := parseEventID(lastEventID)
	if !ok {
		return false
	}
	owner := s.owner(id)
	if owner == "" {
		return false
	}
	return s.serveHandedOver(w, r, ls, id, seq) || s.serveRemote(w, r, ls, owner, id, seq)
}
