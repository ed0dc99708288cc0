package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// round serves one HTTP request attached to the call: it hands the call
// the client's inputResponses (keys the call is not waiting for are
// ignored), then waits for the call's response or its next server→client
// requests, and returns the JSON-RPC response for request id. The call's
// notifications meanwhile go to the request's reply (heldCall.out). While the
// request waits, the client closing it cancels the call, as on every
// 2026-07-28 request; between rounds the call waits at most InputWait for
// the next retry.
func (h *heldCall) round(ctx context.Context, id json.RawMessage, responses map[string]json.RawMessage) []byte {
	stop := context.AfterFunc(ctx, func() { h.ls.cancel(errCallerGone) })
	defer stop()
	h.answer(responses)
	for {
		if resp, ok := h.ready(id); ok {
			return resp
		}
		select {
		case <-h.done:
		case <-h.wake:
			h.settle()
		}
	}
}

// answer delivers the responses to the pending requests they name.
func (h *heldCall) answer(responses map[string]json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, raw := range responses {
		if in := h.pending[key]; in != nil {
			delete(h.pending, key)
			in.answer <- clientResponse{result: bytes.Clone(raw)}
		}
	}
}

// settle gives the call a moment to make the other requests it makes at
// once, unless it ends first.
func (h *heldCall) settle() {
	t := time.NewTimer(inputSettle)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
	}
}

// ready returns the round's response once there is one: the call's own,
// when it ended; an InputRequiredResult, when it waits for the client.
// Either way the round is over: a call that ended is forgotten, one that
// waits starts waiting for the next retry.
func (h *heldCall) ready(id json.RawMessage) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.done:
		h.attached, h.out = false, nil
		h.s.dropHeld(h)
		return h.final(id), true
	default:
	}
	if len(h.pending) == 0 {
		return nil, false
	}
	h.rounds++
	h.attached, h.out = false, nil
	h.timer = time.AfterFunc(h.s.inputWait, h.expire)
	return appendResult(nil, id, h.inputRequired()), true
}

// final is the call's response, under the id of the request that gets it;
// h.mu is held.
func (h *heldCall) final(id json.RawMessage) []byte {
	if h.resp == nil {
		return appendError(nil, id, &rpcError{Code: codeCancelled, Message: "Request cancelled"})
	}
	if bytes.Equal(id, h.firstID) {
		return h.resp
	}
	return withID(h.resp, id)
}

// expire cancels a call whose client did not retry in time: its pending
// requests fail (an upstream gets an error for its request, an approval
// asked of the caller is withdrawn and the call ends cancelled), and a
// retry after that is told to call again.
func (h *heldCall) expire() {
	h.mu.Lock()
	waiting := !h.attached
	h.mu.Unlock()
	if waiting {
		h.ls.cancel(errNoRetry)
		h.s.dropHeld(h)
	}
}

// inputRequest is one entry of inputRequests.
type inputRequestJSON struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// inputRequired encodes the InputRequiredResult of the pending requests,
// with the requestState of this round; h.mu is held.
func (h *heldCall) inputRequired() []byte {
	reqs := make(map[string]inputRequestJSON, len(h.pending))
	for _, key := range slices.Sorted(maps.Keys(h.pending)) {
		in := h.pending[key]
		reqs[key] = inputRequestJSON{Method: in.method, Params: in.params}
	}
	claims, _ := json.Marshal(stateClaims{Call: h.id, Replica: h.s.instance, Round: h.rounds, Bind: h.bind}) // plain fields always encode
	res := struct {
		ResultType    string                      `json:"resultType"`
		InputRequests map[string]inputRequestJSON `json:"inputRequests"`
		RequestState  string                      `json:"requestState"`
		Meta          json.RawMessage             `json:"_meta"`
	}{"input_required", reqs, h.s.signer.Sign(claims, h.s.now().Add(h.s.inputWait)), h.s.withServerInfo(nil)}
	b, err := json.Marshal(res)
	if err != nil { // params that are not valid JSON cannot reach here: they came from a client or upstream decoder
		return []byte(`{"resultType":"input_required","inputRequests":{}}`)
	}
	return b
}

// withID returns a JSON-RPC response with its id replaced.
func withID(resp []byte, id json.RawMessage) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(resp, &env) != nil {
		return resp
	}
	env["id"] = id
	b, err := json.Marshal(env)
	if err != nil {
		return resp
	}
	return b
}

// putHeld adds a held call to the replica's table.
func (s *Server) putHeld(h *heldCall) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if s.held == nil {
		s.held = make(map[string]*heldCall)
	}
	s.held[h.id] = h
}

// heldCall returns the held call with id, or nil.
func (s *Server) heldCall(id string) *heldCall {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	return s.held[id]
}

// dropHeld removes a held call from the table.
func (s *Server) dropHeld(h *heldCall) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if s.held[h.id] == h {
		delete(s.held, h.id)
	}
}

// HeldCalls returns how many 2026-07-28 calls this replica holds for a
// client's retry with inputResponses.
func (s *Server) HeldCalls() int {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	return len(s.held)
}
