package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate"
)

// A retry forwarded to the replica that holds its call. A 2026-07-28
// client's retry (requestState and inputResponses) may reach any replica;
// the requestState names the replica that holds the call (stateClaims.
// Replica). A replica that gets a retry of a call another one holds
// verifies the token as usual, then sends the retry's round to the holder
// (peerRound) and waits. The holder attaches the round to the call, as if
// the client had sent it there, says that it took it (before the round
// runs) and then every roundBeat that it still runs it, and sends back what the round answers (peerRounded): the
// call's result, the next InputRequiredResult with its new requestState,
// or an error. The replica that got the retry answers its client with it.
//
// The client closing the retry cancels the call, as on the holder itself:
// the forwarding replica sends peerDetach, and the holder ends the round's
// context. A holder that does not take the round within roundAck (it was
// killed, or its messages do not arrive), or that falls silent for
// roundSilence mid-round, gets the client an error that says to call again
// without requestState. Notifications the call sends during a forwarded
// round (progress, log messages) are not relayed.

// Kinds of peerMessage for forwarded rounds.
const (
	peerRound   = "round"   // a client's retry, for the replica that holds its call
	peerRounded = "rounded" // the holder's answer to a forwarded round; without Msg, that it runs it
)

// Bounds of a forwarded round.
const (
	// roundAck is how long a forwarded round waits for the holder to take
	// it.
	roundAck = 5 * time.Second
	// roundBeat is how often the holder says it still runs a round.
	roundBeat = 5 * time.Second
	// roundSilence is how long the forwarding replica waits without word
	// from the holder once it took the round.
	roundSilence = 3 * roundBeat
)

// heldAway is what resume returns for a retry of a call another replica
// holds: the retry is to be forwarded there.
type heldAway struct{ claims stateClaims }

func (e *heldAway) Error() string { return "gateway replica " + e.claims.Replica + " holds the call" }

// forwardedRound is a round of a held call that a replica forwards to the
// call's holder: the request's id and inputResponses, and the round the
// requestState was for (verified by the sender, with its binding).
type forwardedRound struct {
	Call      string                     `json:"c"`
	Round     int                        `json:"n"`
	ID        json.RawMessage            `json:"id"`
	Responses map[string]json.RawMessage `json:"in,omitempty"`
}

// forwardRound sends a retry's round to the replica holding its call and
// returns the holder's answer to request id, or an error response when the
// holder does not answer. out is the retry's reply.
func (s *Server) forwardRound(ctx context.Context, away *heldAway, id json.RawMessage, responses map[string]json.RawMessage, out *callReply) []byte {
	out.start(false)
	holder, rid := away.claims.Replica, randomHex(8)
	ch := s.remotes.expect(rid)
	defer s.remotes.forget(rid)
	body, err := json.Marshal(&forwardedRound{Call: away.claims.Call, Round: away.claims.Round, ID: id, Responses: responses})
	if err != nil { // raw messages from a decoded request always encode
		return appendError(nil, id, &rpcError{Code: codeInternal, Message: err.Error()})
	}
	s.sendPeer(holder, &peerMessage{Kind: peerRound, Resume: rid, Msg: body})
	resp, err := awaitRound(ctx, ch, holder)
	if err == nil {
		return resp
	}
	// The client went, or is told to call again: either way the call ends
	// on the holder, even if the holder takes the round late.
	s.sendPeer(holder, &peerMessage{Kind: peerDetach, Resume: rid})
	if ctx.Err() != nil {
		return appendError(nil, id, &rpcError{Code: codeCancelled, Message: "Request cancelled"})
	}
	s.log.Warn("mcp: a forwarded MRTR round got no answer", "holder", holder, "err", err)
	return appendError(nil, id, toRPCError(err))
}

// awaitRound waits for the holder's answer to a forwarded round: at most
// roundAck for the holder to take it, then at most roundSilence between
// two words from the holder.
func awaitRound(ctx context.Context, ch <-chan *peerMessage, holder string) ([]byte, error) {
	t := time.NewTimer(roundAck)
	defer t.Stop()
	taken := false
	for {
		select {
		case m := <-ch:
			if len(m.Msg) > 0 {
				return m.Msg, nil
			}
			taken = true
			t.Reset(roundSilence)
		case <-t.C:
			return nil, holderSilent(holder, taken)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// holderSilent is the error of a forwarded round whose holder did not
// answer: before it took the round, the call is as the client left it
// (-32602); after, the round's outcome is unknown (-32603).
func holderSilent(holder string, taken bool) error {
	if !taken {
		return mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: the gateway replica holding this call (%s) did not answer (it may have stopped); call again without requestState", holder)
	}
	return mcpgate.Errorf(mcpgate.EINTERNAL, "the gateway replica holding this call (%s) stopped answering during the round, whose outcome is unknown; call again without requestState", holder)
}

// takeRound starts running a round another replica forwarded (m). It
// registers the round before it returns, so that the peerDetach of a
// client that went, which comes later on the same channel, finds it.
func (s *Server) takeRound(m *peerMessage) {
	gone := newConnSink() // closed by the forwarding replica's peerDetach
	s.remotes.feed(m.Resume, gone)
	go s.serveForwardedRound(m, gone)
}

// serveForwardedRound runs, on the replica holding the call, a round
// another replica forwarded (m), and sends that replica the round's
// answer. gone closes when that replica's client went.
func (s *Server) serveForwardedRound(m *peerMessage, gone *connSink) {
	defer s.remotes.stopFeed(m.Resume)
	var f forwardedRound
	if err := json.Unmarshal(m.Msg, &f); err != nil {
		s.log.Warn("mcp: malformed round from another replica", "err", err)
		return
	}
	h, err := s.attachForwarded(&f)
	if err != nil {
		s.sendPeer(m.From, &peerMessage{Kind: peerRounded, Resume: m.Resume, Msg: appendError(nil, f.ID, modernError(toRPCError(err)))})
		return
	}
	s.sendPeer(m.From, &peerMessage{Kind: peerRounded, Resume: m.Resume}) // taken, before the round runs
	ctx, cancel := context.WithCancel(s.base)
	defer cancel()
	go s.beatRound(ctx, cancel, gone, m.From, m.Resume)
	resp := h.round(ctx, f.ID, f.Responses)
	s.sendPeer(m.From, &peerMessage{Kind: peerRounded, Resume: m.Resume, Msg: resp})
}

// attachForwarded attaches a forwarded round to the call it continues, as
// resume does for a retry that reached this replica.
func (s *Server) attachForwarded(f *forwardedRound) (*heldCall, error) {
	h := s.heldCall(f.Call)
	if h == nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: the call this requestState continues is no longer held (it ended or timed out); call again without requestState")
	}
	return h, h.attach(f.Round, &callReply{s: s, ls: h.ls})
}

// beatRound tells replica to, every roundBeat, that this replica runs
// the round rid, until ctx ends; it cancels the round when the forwarding
// replica's client went (gone closed).
func (s *Server) beatRound(ctx context.Context, cancel context.CancelFunc, gone *connSink, to, rid string) {
	t := time.NewTicker(roundBeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone.wake:
			if _, closed := gone.take(); closed {
				cancel()
				return
			}
		case <-t.C:
			s.sendPeer(to, &peerMessage{Kind: peerRounded, Resume: rid})
		}
	}
}
