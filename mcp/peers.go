package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// What crosses replicas. A session is stored, so any replica serves its
// requests, but some of what a request may concern lives in the memory of
// the replica that started it: the call waiting for the client's answer to
// a server→client request, a call in flight that the client cancels, the
// session's GET stream a notification is for, and a stream's replay. When
// such a request reaches another replica, that replica passes it on through
// Peers to the one that holds the state, named by the instance prefix of
// the request or stream id (or, for a cancellation and a notification,
// whose holder is unknown, to every replica).

// Peers carries messages between the transports of the gateway's replicas
// (package peer). Without it, a Server knows only its own state, and
// server→client answers, cancellations and resumptions must reach the
// replica that holds it (session affinity).
type Peers interface {
	// Instance returns this replica's id: 12 characters that prefix the
	// ids of its streams and server→client requests.
	Instance() string
	// Send delivers msg to the Server of replica to, or of every other
	// replica when to is "".
	Send(ctx context.Context, to string, msg []byte) error
	// Messages returns the channel on which the messages for this replica
	// arrive; it is closed when Peers stops.
	Messages() <-chan []byte
	// Collect returns the messages sent to key (a name that is no
	// replica's instance) that are still kept, oldest first.
	Collect(ctx context.Context, key string) ([][]byte, error)
}

// Kinds of peerMessage.
const (
	peerAnswer  = "answer" // a client's response to a request of the recipient
	peerCancel  = "cancel" // notifications/cancelled for a call somewhere
	peerNotify  = "notify" // a notification for a session's GET stream somewhere
	peerResume  = "resume" // the sender's client resumes a stream of the recipient
	peerEvents  = "events" // events of a resumed stream, for the sender's client
	peerDetach  = "detach" // the resuming client went: stop sending events (or running a forwarded round)
	peerTimeout = 5 * time.Second
)

// peerMessage is what one Server sends another.
type peerMessage struct {
	Kind    string          `json:"k"`
	From    string          `json:"f,omitempty"`
	Session string          `json:"s,omitempty"`
	Msg     json.RawMessage `json:"m,omitempty"`  // a client's message, or a notification
	Key     string          `json:"id,omitempty"` // a cancelled call's request id key
	Stream  string          `json:"st,omitempty"`
	After   uint64          `json:"a,omitempty"`
	Resume  string          `json:"r,omitempty"` // which resumption events belong to
	Known   bool            `json:"kn,omitempty"`
	Events  []byte          `json:"e,omitempty"`
	Closed  bool            `json:"c,omitempty"`
	Handed  []handedEvent   `json:"h,omitempty"` // a stream handed over
}

// marshalPeer and unmarshalPeer encode and decode a peerMessage.
func marshalPeer(m *peerMessage) ([]byte, error) { return json.Marshal(m) }
func unmarshalPeer(b []byte) (*peerMessage, error) {
	var m peerMessage
	err := json.Unmarshal(b, &m)
	return &m, err
}

// remoteSet is the resumptions this replica serves for streams held
// elsewhere (in), and those it feeds for other replicas (out).
type remoteSet struct {
	mu  sync.Mutex
	in  map[string]chan *peerMessage
	out map[string]*connSink
}

// sendPeer sends m to replica to; failures are logged, since the request
// that caused it has been answered already.
func (s *Server) sendPeer(to string, m *peerMessage) {
	if s.peers == nil {
		return
	}
	m.From = s.instance
	b, err := json.Marshal(m)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.base), peerTimeout)
		defer cancel()
		err = s.peers.Send(ctx, to, b)
	}
	if err != nil {
		s.log.Warn("mcp: message to another replica failed", "kind", m.Kind, "to", to, "err", err)
	}
}

// receivePeers handles the messages of other replicas until Peers stops.
func (s *Server) receivePeers(ch <-chan []byte) {
	for b := range ch {
		var m peerMessage
		if json.Unmarshal(b, &m) != nil {
			s.log.Warn("mcp: malformed message from another replica")
			continue
		}
		s.receivePeer(&m)
	}
}

// receivePeer handles one message of another replica.
func (s *Server) receivePeer(m *peerMessage) {
	switch m.Kind {
	case peerAnswer:
		if ls := s.liveSession(m.Session); ls != nil {
			msgs, _, _ := decode(m.Msg)
			if len(msgs) == 1 {
				ls.deliver(msgs[0])
			}
		}
	case peerCancel:
		if ls := s.liveSession(m.Session); ls != nil {
			ls.cancelCall(m.Key, "cancelled through another replica")
		}
	case peerNotify:
		if ls := s.liveSession(m.Session); ls != nil {
			ls.emitOnGet(m.Msg)
		}
	case peerResume:
		s.feedRemote(m)
	case peerEvents:
		s.remotes.route(m)
	case peerDetach:
		s.remotes.stopFeed(m.Resume)
	case peerRound:
		s.takeRound(m)
	case peerRounded:
		s.remotes.route(m)
	}
}

// liveSession returns the session if this replica holds it in memory.
func (s *Server) liveSession(id string) *liveSession {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live[id]
}

// owner returns the instance prefix of a stream or request id when it
// names another replica, "" when it is this one's or malformed.
func (s *Server) owner(id string) string {
	n := len(s.instance)
	if s.peers == nil || len(id) <= n || strings.HasPrefix(id, s.instance) {
		return ""
	}
	return id[:n]
}

// forwardAnswer passes a client's response to the replica whose request it
// answers, when that is not this one. It reports whether it did.
func (s *Server) forwardAnswer(ls *liveSession, m *message) bool {
	id, ok := jsonString(m.ID)
	if !ok {
		return false
	}
	to := s.owner(id)
	if to == "" {
		return false
	}
	msg := appendResponse(m)
	s.sendPeer(to, &peerMessage{Kind: peerAnswer, Session: ls.id, Msg: msg})
	return true
}

// appendResponse re-encodes a client's response message.
func appendResponse(m *message) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, m.ID...)
	if m.Error != nil {
		b = append(b, `,"error":`...)
		b = append(b, m.Error...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, m.Result...)
	}
	return append(b, '}')
}
