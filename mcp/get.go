package mcp

import (
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// serveGet opens the session's server→client stream, or resumes one of the
// session's streams named by Last-Event-ID, replaying the events that
// followed. The stream stays open until the client goes, the session ends,
// or (for a resumed call reply) the call's result has been sent.
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential) {
	if !parseAccept(r.Header.Values("Accept")).sse {
		writeStatus(w, http.StatusNotAcceptable, "not_acceptable", "GET opens an SSE stream: Accept must admit text/event-stream")
		return
	}
	ls, err := s.openSession(r, agent, cred)
	if err != nil {
		s.httpError(w, err)
		return
	}
	defer ls.release()
	sk := newConnSink()
	st, after := s.resumable(ls, r.Header.Get("Last-Event-ID"))
	if st == nil && s.resumeElsewhere(w, r, ls, r.Header.Get("Last-Event-ID")) {
		return
	}
	if st == nil {
		st = s.openGetStream(ls)
		if primesStreams(ls.version) {
			sk.write(primingEvent(st.eventID(0)))
		}
	}
	if s.takeOverStream(w, r, ls, st, sk, after) {
		return
	}
	startSSE(w)
	st.attach(sk, after)
	defer st.detach(sk)
	s.pump(r.Context(), w, sk, ls)
}

// resumable returns the session's stream named by a Last-Event-ID, if this
// replica still keeps it, and the sequence number to replay after. A
// resumed GET stream becomes the session's GET stream again, unless it was
// closed because another GET stream replaced it: that one is not resumed,
// so that a stale id does not end the live GET stream for a dead one.
func (s *Server) resumable(ls *liveSession, lastEventID string) (*stream, uint64) {
	id, seq, ok := parseEventID(lastEventID)
	if !ok {
		return nil, 0
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	st := ls.streams.find(id)
	if st == nil || !st.get || ls.streams.get == st {
		return st, seq
	}
	if st.isClosed() {
		return nil, 0
	}
	ls.streams.replaceGet(st)
	return st, seq
}

// openGetStream starts a new GET stream for ls, closing the previous one:
// a session has one stream for messages unrelated to calls.
func (s *Server) openGetStream(ls *liveSession) *stream {
	st := s.newStream(ls, true)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.streams.replaceGet(st)
	return st
}

// serveDelete ends the session: its calls are canceled, its streams close,
// and later requests with its id get 404.
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential) {
	ls, err := s.openSession(r, agent, cred)
	if err != nil {
		s.httpError(w, err)
		return
	}
	defer ls.release()
	err = s.store.EndSession(r.Context(), ls.id, s.now())
	if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		s.httpError(w, err)
		return
	}
	s.drop(ls, mcpgate.Errorf(mcpgate.ECANCELED, "the session ended"))
	w.WriteHeader(http.StatusOK)
}

// httpError writes err with WriteHTTPError, logging internal errors first.
func (s *Server) httpError(w http.ResponseWriter, err error) {
	if mcpgate.ErrorCode(err) == mcpgate.EINTERNAL {
		s.log.Error("mcp: request failed", "err", err)
	}
	WriteHTTPError(w, err)
}
