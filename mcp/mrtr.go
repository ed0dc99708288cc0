package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Multi round-trip requests (MRTR, 2026-07-28 basic/utilities/mrtr): a
// 2026-07-28 caller has no stream the gateway could send a server→client
// request on, so where an older caller gets elicitation/create,
// sampling/createMessage or roots/list mid-call (the approval gate's
// caller mode, or an upstream's request relayed), a 2026-07-28 caller gets
// an InputRequiredResult: the requests under keys of the gateway's own, and
// a requestState that the gateway signs. The client retries the same
// request with inputResponses and that requestState; the call continues.
//
// The call is held, not restarted: the first request starts it apart from
// its HTTP exchange (a heldCall), and a server→client request it makes
// waits in memory for the retry. So one call is one pipeline run across
// every round: rate limited, idempotency-claimed, approved and audited
// once. The requestState names the held call, the round, and a hash that
// binds the agent, the caller, the method, the tool (or prompt, or URI) and
// the arguments; any replica verifies it (tamper-proof, expiring), but only
// the replica that holds the call can continue it. A retry that reaches
// another replica is forwarded to the holder through Peers, which runs the
// round and sends back its answer (mrtr_forward.go); without Peers it is
// refused with an error that says to call again without requestState.

// StateSigner signs and opens requestState tokens (package reqstate
// implements it). Every replica must share its key.
type StateSigner interface {
	// Sign returns a token carrying payload until expires.
	Sign(payload []byte, expires time.Time) string
	// Open returns the payload of a token Sign made; an error when the
	// token is not authentic or has expired.
	Open(token string, now time.Time) ([]byte, error)
}

// DefaultInputWait is how long a held call waits for the client's retry
// with inputResponses before it is cancelled.
const DefaultInputWait = 5 * time.Minute

// inputSettle is how long a round waits, after the first server→client
// request of a held call, for the others the call makes at once (an
// upstream that asks for elicitation, sampling and roots together), so that
// they go out in one InputRequiredResult.
const inputSettle = 50 * time.Millisecond

// mrtrMethods are the requests that may answer with an InputRequiredResult
// (basic/utilities/mrtr: tools/call, prompts/get, resources/read).
var mrtrMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// Errors that end a held call.
var (
	errNoRetry    = errors.New("the client did not retry with inputResponses in time")
	errCallerGone = errors.New("the client closed the request")
)

// multiRound reports whether a 2026-07-28 request runs as a held call: the
// server signs state, the method may answer InputRequiredResult, and the
// client either can answer some server→client request or continues a call.
func (s *Server) multiRound(m *message, proto *requestProtocol) bool {
	if s.signer == nil || !mrtrMethods[m.method] || (m.method != "tools/call" && !s.relays(m.method)) {
		return false
	}
	return answersInput(proto.clientCaps) || (bytes.Contains(m.Params, []byte(`"requestState"`)) && hasMember(m.Params, "requestState"))
}

// answersInput reports whether client capabilities declare elicitation,
// sampling or roots.
func answersInput(caps json.RawMessage) bool {
	var c map[string]json.RawMessage
	if len(bytes.TrimSpace(caps)) <= 2 || json.Unmarshal(caps, &c) != nil { // "{}" declares nothing
		return false
	}
	for _, name := range requestCapability {
		if v := c[name]; v != nil && string(v) != "null" {
			return true
		}
	}
	return false
}

// hasMember reports whether the JSON object raw has a member name.
func hasMember(raw json.RawMessage, name string) bool {
	var p map[string]json.RawMessage
	return json.Unmarshal(raw, &p) == nil && p[name] != nil
}

// retryParams are the MRTR members of a request's params.
type retryParams struct {
	State     *string                    `json:"requestState"`
	Responses map[string]json.RawMessage `json:"inputResponses"`
	Name      json.RawMessage            `json:"name"`
	URI       json.RawMessage            `json:"uri"`
	Arguments json.RawMessage            `json:"arguments"`
}

// serveMultiRound serves one round of a held call: the first request
// starts it, a retry continues the call its requestState names. The round
// ends with the call's response, or with an InputRequiredResult.
func (s *Server) serveMultiRound(w http.ResponseWriter, r *http.Request, ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, acc accepts, m *message, proto *requestProtocol) {
	reply := s.newCallReply(r, w, ls, acc)
	h, p, err := s.heldFor(r, agent, cred, m, proto, reply)
	var away *heldAway
	if errors.As(err, &away) {
		resp := s.forwardRound(r.Context(), away, m.ID, p.Responses, reply)
		if !reply.finish(resp, false) {
			writeJSON(w, replyStatus(ls, resp), resp)
		}
		return
	}
	if err != nil {
		s.reply(w, r, ls, acc, s.errorResponse(ls, m, err))
		return
	}
	resp := h.round(r.Context(), m.ID, p.Responses)
	if !reply.finish(resp, false) {
		writeJSON(w, replyStatus(ls, resp), resp)
	}
}

// heldFor returns the held call a request continues, or a new one, with
// out, the request's reply, attached to it.
func (s *Server) heldFor(r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message, proto *requestProtocol, out *callReply) (*heldCall, *retryParams, error) {
	var p retryParams
	if err := unmarshalParams(m.Params, &p); err != nil {
		return nil, nil, err
	}
	token, err := parseProgressToken(m.Params)
	if err != nil {
		return nil, nil, err
	}
	out.token = token
	bind, err := binding(agent, cred, m.method, &p)
	if err != nil {
		return nil, nil, err
	}
	if p.State == nil {
		p.Responses = nil // a first request has nothing to answer
		return s.hold(r, agent, cred, m, proto, bind, out.start(false)), &p, nil
	}
	h, err := s.resume(*p.State, bind, out)
	return h, &p, err
}

// binding hashes what a requestState is bound to: the agent, the caller,
// the method, the name (tool or prompt) or URI, and the arguments.
func binding(agent *mcpgate.Agent, cred *mcpgate.Credential, method string, p *retryParams) (string, error) {
	name, _ := jsonString(p.Name)
	if uri, ok := jsonString(p.URI); ok {
		name = uri
	}
	return mcpgate.HashArguments(agent.ID+"\x00"+cred.Identity()+"\x00"+method+"\x00"+name, p.Arguments)
}

// stateClaims is what a requestState carries.
type stateClaims struct {
	Call    string `json:"c"` // the held call's id
	Replica string `json:"r"` // the instance of the replica that holds it
	Round   int    `json:"n"` // the round it answers
	Bind    string `json:"b"` // see binding
}

// resume verifies a retry's requestState and returns the held call it
// continues, now attached to the retry, whose reply is out. Every refusal is EINVALID (-32602)
// and says what to do.
func (s *Server) resume(state, bind string, out *callReply) (*heldCall, error) {
	raw, err := s.signer.Open(state, s.now())
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: %v; call again without requestState", err)
	}
	var c stateClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: requestState is malformed; call again without requestState")
	}
	if c.Bind != bind {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: requestState belongs to another request (another agent, caller, method, name or arguments); retry with the request it came from")
	}
	h := s.heldCall(c.Call)
	if h == nil && s.peers != nil && c.Replica != s.instance {
		return nil, &heldAway{claims: c}
	}
	if h == nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: the call this requestState continues is no longer held (it ended or timed out, or another gateway replica holds it); call again without requestState")
	}
	return h, h.attach(c.Round, out)
}

// hold starts m as a held call, apart from r, attached to r, whose reply
// is out.
func (s *Server) hold(r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message, proto *requestProtocol, bind string, out *callReply) *heldCall {
	ctx, cancel := context.WithCancelCause(s.base)
	now := s.now()
	h := &heldCall{
		id: randomHex(16), s: s, bind: bind, attached: true, out: out,
		pending: make(map[string]*inputRequest), wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	h.ls = &liveSession{
		agentID: agent.ID, identity: cred.Identity(), version: proto.version, clientCaps: proto.clientCaps,
		ctx: ctx, cancel: cancel, seenAt: now, checkedAt: now, usedAt: now,
	}
	h.ls.level.Store(int32(proto.level))
	s.putHeld(h)
	reply := &callReply{s: s, ls: h.ls, r: r, held: h} // no writer: a held call cannot stream
	first := *m
	go func() {
		resp, cancelled := s.runStreamed(h.ls, agent, cred, &first, reply)
		h.finish(resp, cancelled, first.ID)
	}()
	return h
}

// heldCall is a 2026-07-28 request running apart from its HTTP exchanges,
// so that its server→client requests can wait for the client's retry.
type heldCall struct {
	id   string
	s    *Server
	bind string
	ls   *liveSession // the call's own stand-in session; its ctx is the call's
	wake chan struct{}
	done chan struct{} // closed when the call ended

	mu       sync.Mutex
	rounds   int // InputRequiredResults sent
	seq      int
	pending  map[string]*inputRequest // by key
	attached bool                     // a request is waiting on the call
	out      *callReply               // the reply of the request attached, if any
	timer    *time.Timer              // cancels the call when no retry comes
	resp     []byte                   // once done: the call's response
	firstID  json.RawMessage
}

// leg returns the reply of the request attached to the call, which gets
// the call's notifications; nil between requests.
func (h *heldCall) leg() *callReply {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out
}

// inputRequest is a server→client request waiting for an inputResponse.
type inputRequest struct {
	method string
	params json.RawMessage
	answer chan clientResponse
}

// scope is the call's own scope, which upstream MCP skills key an
// upstream session of its own by (see callReply.ScopeID).
func (h *heldCall) scope() string { return "mrtr-" + h.id }

// ask puts a server→client request among the call's pending ones and
// waits for the client's answer in a retry.
func (h *heldCall) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	in := &inputRequest{method: method, params: params, answer: make(chan clientResponse, 1)}
	key := h.add(in, mcpgate.InputKey(ctx))
	defer h.forget(key)
	select {
	case a := <-in.answer:
		return a.result, a.err
	case <-h.ls.ctx.Done():
		return nil, h.unanswered(method)
	case <-ctx.Done():
		if h.ls.ctx.Err() != nil { // its end cancels the call too (see RequestClient)
			return nil, h.unanswered(method)
		}
		return nil, fmt.Errorf("waiting for the client's answer to %s: %w", method, ctx.Err())
	}
}

// unanswered is ask's error when the call's scope ends before the client
// answered method in a retry.
func (h *heldCall) unanswered(method string) error {
	return mcpgate.Errorf(mcpgate.EUNAVAILABLE, "the client did not answer %s: %v", method, context.Cause(h.ls.ctx))
}

// add registers a pending request under a new key, the one its upstream
// gave it (want) when no other pending request has it, and wakes the
// round.
func (h *heldCall) add(in *inputRequest, want string) string {
	h.mu.Lock()
	h.seq++
	key := inputKey(in.method, h.seq)
	if _, taken := h.pending[want]; want != "" && !taken {
		key = want
	}
	h.pending[key] = in
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	return key
}

// inputKey names a pending request: its kind and a number.
func inputKey(method string, n int) string {
	kind := requestCapability[method]
	if kind == "" {
		kind = "input"
	}
	return kind + "-" + strconv.Itoa(n)
}

// forget drops a pending request that was answered or gave up.
func (h *heldCall) forget(key string) {
	h.mu.Lock()
	delete(h.pending, key)
	h.mu.Unlock()
}

// attach lets a retry of round n, whose reply is out, continue the call;
// one at a time, and only with the latest round's state.
func (h *heldCall) attach(n int, out *callReply) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.attached:
		return mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: another request is continuing this call; wait for its answer")
	case n != h.rounds:
		return mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: requestState is from an earlier round of this call; retry with the latest one")
	}
	h.attached, h.out = true, out.start(false)
	if h.timer != nil {
		h.timer.Stop()
	}
	return nil
}

// finish records the call's response; the held call is then forgotten
// unless a round is waiting for it, and what the call held upstream is
// released.
func (h *heldCall) finish(resp []byte, cancelled bool, id json.RawMessage) {
	h.mu.Lock()
	h.resp, h.firstID = resp, id
	if cancelled {
		h.resp = nil
	}
	close(h.done)
	h.mu.Unlock()
	h.ls.cancel(nil)
	if h.s.sessionClosed != nil {
		go h.s.sessionClosed(h.scope())
	}
}
