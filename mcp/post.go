package mcp

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// servePost handles a POST: one JSON-RPC message, or a batch on versions
// that still have them.
func (s *Server) servePost(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential) {
	if !isJSONContent(r.Header.Get("Content-Type")) {
		writeStatus(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
		return
	}
	acc := parseAccept(r.Header.Values("Accept"))
	if !acc.json && !acc.sse {
		writeStatus(w, http.StatusNotAcceptable, "not_acceptable", "Accept must admit application/json or text/event-stream")
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		s.httpError(w, err)
		return
	}
	msgs, batch, rerr := decode(body)
	switch {
	case rerr != nil:
		writeRPCError(w, http.StatusBadRequest, rerr)
	case stateless(r, msgs[0]):
		s.serveStateless(w, r, agent, cred, acc, msgs, batch)
	case batch:
		s.serveBatch(w, r, agent, cred, acc, msgs)
	default:
		s.serveMessage(w, r, agent, cred, acc, msgs[0])
	}
}

// readBody reads the request body up to the size limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > s.maxBody {
		return nil, tooLarge(s.maxBody)
	}
	size, body := 512, r.Body
	if r.ContentLength >= 0 {
		// net/http reads no more than the Content-Length, already checked
		// against the limit: no MaxBytesReader (an allocation) is needed.
		size = int(r.ContentLength) + 1 // +1 so ReadAll sees EOF without growing
	} else {
		body = http.MaxBytesReader(w, r.Body, s.maxBody)
	}
	b, err := readAll(body, size)
	if err != nil {
		return nil, bodyError(err, s.maxBody)
	}
	return b, nil
}

// bodyError is the error of a failed read of the request body. (Its own
// function: the target of errors.As escapes, and would cost every read an
// allocation.)
func bodyError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLarge(limit)
	}
	return mcpgate.Errorf(mcpgate.EINVALID, "reading the request body failed: %v", err)
}

// readAll is io.ReadAll with a first buffer of the given size.
func readAll(rd io.Reader, size int) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		} else if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

func tooLarge(limit int64) error {
	return mcpgate.Errorf(mcpgate.ETOOLARGE, "the request body exceeds %d bytes", limit)
}

// serveMessage handles one message: initialize opens a session; everything
// else needs one.
func (s *Server) serveMessage(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, acc accepts, m *message) {
	if m.kind == kindInvalid {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: " + m.problem})
		return
	}
	if m.kind == kindRequest && m.method == "initialize" {
		s.initialize(w, r, agent, cred, acc, m)
		return
	}
	ls, err := s.openSession(r, agent, cred)
	if err != nil {
		s.httpError(w, err)
		return
	}
	defer ls.release()
	switch m.kind {
	case kindRequest:
		if s.streamed(m.method) {
			s.serveStreamed(w, r, ls, agent, cred, acc, m)
		} else {
			resp := s.answer(r, ls, agent, m)
			s.reply(w, r, ls, acc, resp) // writes or copies resp, keeping none of it
			s.freeBuf(resp)
		}
	case kindNotification:
		s.notification(ls, m)
		w.WriteHeader(http.StatusAccepted)
	case kindResponse:
		s.deliver(ls, m) // the answer to a server→client request
		w.WriteHeader(http.StatusAccepted)
	}
}

// serveBatch handles a JSON array of messages (2025-03-26 and 2024-11-05).
// Calls run one after another and reply in JSON: a batch cannot stream.
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, acc accepts, msgs []*message) {
	if r.Header.Get("Mcp-Session-Id") == "" {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: a JSON-RPC batch needs a session (initialize cannot be batched), and batching was removed in protocol version 2025-06-18"})
		return
	}
	ls, err := s.openSession(r, agent, cred)
	if err != nil {
		s.httpError(w, err)
		return
	}
	defer ls.release()
	if !allowsBatch(ls.version) {
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: JSON-RPC batching was removed in protocol version 2025-06-18 and this session speaks %s; send one message per POST", ls.version)})
		return
	}
	var out [][]byte
	for _, m := range msgs {
		if resp := s.batchEntry(r, ls, agent, cred, m); resp != nil {
			out = append(out, resp)
		}
	}
	s.replyBatch(w, r, ls, acc, out)
}

// batchEntry handles one message of a batch and returns its response, or
// nil for notifications and responses.
func (s *Server) batchEntry(r *http.Request, ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message) []byte {
	switch {
	case m.kind == kindInvalid:
		return appendError(nil, m.replyID(), &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: " + m.problem})
	case m.kind == kindNotification:
		s.notification(ls, m)
	case m.kind == kindResponse:
		s.deliver(ls, m)
	case m.kind != kindRequest:
	case m.method == "initialize":
		return appendError(nil, m.ID, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: initialize must not be part of a batch"})
	case s.streamed(m.method):
		resp, _ := s.runStreamed(ls, agent, cred, m, s.newCallReply(r, nil, ls, accepts{json: true}))
		return resp
	default:
		return s.answer(r, ls, agent, m)
	}
	return nil
}

// reply sends one response: JSON, or a one-event SSE stream to a client
// that wants SSE.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, ls *liveSession, acc accepts, resp []byte) {
	if !acc.wantsSSE() || ls == nil {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	s.replySSE(w, r, ls, resp)
}

// replyBatch sends a batch's responses: a JSON array, or one SSE event each
// to a client that wants SSE; 202 when there are none.
func (s *Server) replyBatch(w http.ResponseWriter, r *http.Request, ls *liveSession, acc accepts, resps [][]byte) {
	if len(resps) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if acc.wantsSSE() {
		s.replySSE(w, r, ls, resps...)
		return
	}
	b := []byte{'['}
	for i, resp := range resps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, resp...)
	}
	writeJSON(w, http.StatusOK, append(b, ']'))
}

// replySSE sends messages as a complete SSE stream.
func (s *Server) replySSE(w http.ResponseWriter, r *http.Request, ls *liveSession, msgs ...[]byte) {
	ps := s.openPostStream(w, r, ls)
	for _, msg := range msgs {
		ps.emit(msg)
	}
	ps.end()
}

// postStream is a POST's response turned into an SSE stream of the
// session, written by its own pump goroutine so that whoever emits events
// (a tool's Notifier) never waits for the client.
type postStream struct {
	*stream
	pumped chan struct{} // closed when the pump is done with the response
}

// openPostStream turns a POST's response into an SSE stream of ls, opened
// with a priming event when the session's version has them (see
// primesStreams) and kept alive while quiet. The handler must call end
// before it returns.
func (s *Server) openPostStream(w http.ResponseWriter, r *http.Request, ls *liveSession) *postStream {
	ps := &postStream{stream: s.newStream(ls, false), pumped: make(chan struct{})}
	sk := newConnSink()
	if primesStreams(ls.version) {
		sk.write(primingEvent(ps.eventID(0)))
	}
	ps.attach(sk, 0)
	startSSE(w)
	go func() {
		defer close(ps.pumped)
		s.pump(r.Context(), w, sk, nil)
	}()
	return ps
}

// end closes the stream and waits until the pump has written what was
// queued, or given up on a client that is gone or too slow (at most the
// write timeout per write): after that, the response is the handler's.
func (ps *postStream) end() {
	ps.close()
	<-ps.pumped
}
