package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// requestMeta is what every request that may stream (tools/call or a
// relayed one) reads from its params' _meta member. (It is a named field
// of the params, not embedded: encoding/json would name an embedded type
// in the paths of its decoding errors.)
type requestMeta struct {
	ProgressToken json.RawMessage `json:"progressToken"`
}

// progressToken returns the request's progress token, refusing one that is
// neither a string nor an integer; an absent one is nil.
func (m *requestMeta) progressToken() (json.RawMessage, error) {
	if m.ProgressToken != nil && !validID(m.ProgressToken) {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: _meta.progressToken must be a string or an integer")
	}
	return m.ProgressToken, nil
}

// callParams is what tools/call reads from the client.
type callParams struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      requestMeta     `json:"_meta"`
	// Task, when set, asks that the call run as a task.
	Task json.RawMessage `json:"task"`
}

// parseCall checks tools/call params: a string name, an optional object of
// arguments ({} when absent), and a string or integer progress token.
func parseCall(params json.RawMessage) (name string, args, token json.RawMessage, err error) {
	c, err := decodeCall(params)
	if err != nil {
		return "", nil, nil, err
	}
	return c.name, c.args, c.token, nil
}

// parsedCall is a tools/call's params, checked.
type parsedCall struct {
	name        string
	args, token json.RawMessage
	task        json.RawMessage // params.task, when given
}

// decodeCall checks tools/call params as parseCall does, and keeps the
// task member.
func decodeCall(params json.RawMessage) (*parsedCall, error) {
	var p callParams
	if err := decodeCallParams(params, &p); err != nil {
		return nil, err
	}
	name, ok := jsonString(p.Name)
	if !ok || name == "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: tools/call needs params.name, a tool name string")
	}
	args := p.Arguments
	switch firstByte(args) {
	case 0, 'n':
		args = json.RawMessage("{}")
	case '{':
	default:
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: params.arguments must be an object")
	}
	token, err := p.Meta.progressToken()
	if err != nil {
		return nil, err
	}
	if firstByte(p.Task) == 'n' {
		p.Task = nil // "task": null asks for no task
	}
	return &parsedCall{name: name, args: args, token: token, task: p.Task}, nil
}

// streamed reports whether a request runs with runStreamed: tools/call and
// the relayed methods, which may stream and be cancelled.
func (s *Server) streamed(method string) bool {
	return method == "tools/call" || method == "tasks/result" || s.relays(method)
}

// serveStreamed runs a request for which streamed holds and replies: JSON,
// or SSE if notifications or requests went out first (or the client wants
// SSE). The request runs on the handler's goroutine, unless its reply may
// pause on a connection that only the handler's return can end.
func (s *Server) serveStreamed(w http.ResponseWriter, r *http.Request, ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, acc accepts, m *message) {
	reply := s.newCallReply(r, w, ls, acc).start(s.pausers != nil && s.pausers.MayPause(agent))
	if reply.paused == nil {
		reply.deferring = true
		defer reply.runDeferred() // even after a panic: an audit record is not lost
		resp, cancelled, logLine := s.execStreamed(ls, agent, cred, m, reply)
		if !reply.finish(resp, cancelled) {
			writeJSON(w, replyStatus(ls, resp), resp)
			flush(w)
		}
		logLine() // after the response went out: the line is not the client's wait
		return
	}
	s.servePausable(w, ls, reply, func() ([]byte, bool) { return s.runStreamed(ls, agent, cred, m, reply) })
}

// outcome is the response of a request that ran, and whether it was
// cancelled.
type outcome struct {
	resp      []byte
	cancelled bool
}

// servePausable runs a request whose SSE reply may be paused (see
// callReply.PauseStream) on a connection that cannot be cut (HTTP/2, or a
// ResponseWriter that cannot be hijacked): the request runs on its own
// goroutine, so that its HTTP exchange can end while the session keeps
// what it sends for the client's resumption. The request counts as active
// on the session until it ends.
func (s *Server) servePausable(w http.ResponseWriter, ls *liveSession, reply *callReply, run func() ([]byte, bool)) {
	done := make(chan outcome, 1)
	ls.active.Add(1)
	go func() {
		defer ls.release()
		resp, cancelled := run()
		done <- outcome{resp, cancelled}
	}()
	select {
	case o := <-done:
		if !reply.finish(o.resp, o.cancelled) {
			writeJSON(w, http.StatusOK, o.resp)
		}
	case <-reply.paused:
		go func() {
			o := <-done
			reply.finish(o.resp, o.cancelled)
		}()
		<-reply.st.pumped
	}
}

// runStreamed runs a request for which streamed holds, logs its access
// line and returns its response. cancelled reports that the request's
// context was canceled (by notifications/cancelled, the end of the session
// or Server.Close); resp is then a -32800 error.
func (s *Server) runStreamed(ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message, reply *callReply) (resp []byte, cancelled bool) {
	resp, cancelled, logLine := s.execStreamed(ls, agent, cred, m, reply)
	logLine()
	return resp, cancelled
}

// execStreamed is runStreamed without the access line: it returns the
// function that logs it, for a caller that sends the response first.
func (s *Server) execStreamed(ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message, reply *callReply) (resp []byte, cancelled bool, logLine func()) {
	start := s.now()
	ctx, span := s.startSpan(reply.r, ls, agent, m)
	if s.traced {
		reply.traceparent, reply.tracestate = s.tracer.Traceparent(ctx)
	}
	switch m.method {
	case "tools/call":
		resp, cancelled = s.runCall(ls, agent, cred, m, reply)
	case "tasks/result":
		resp, cancelled = s.runTaskResult(ls, agent, m, reply)
	default:
		resp, cancelled = s.runRelay(ls, agent, cred, m, reply)
	}
	reply.log.cancelled = cancelled
	s.endSpan(span, &reply.log)
	return resp, cancelled, func() { s.logAccess(ctx, ls, agent, m.method, &reply.log, start) }
}

// runCall runs one tools/call, as runStreamed does.
func (s *Server) runCall(ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message, reply *callReply) (resp []byte, cancelled bool) {
	c, err := decodeCall(m.Params)
	if err != nil {
		reply.log.err = err
		return s.errorResponse(ls, m, err), false
	}
	name := c.name
	reply.log.tool = name
	return s.runRequest(ls, m, reply, c.token, func(ctx context.Context) ([]byte, error) {
		call := &mcpgate.Call{Agent: agent, ToolName: name, Arguments: c.args, Caller: cred.Caller(), SessionID: ls.id, Notifier: reply, Client: reply}
		if c.task != nil && s.tasksFor(ls.version) {
			return s.startTask(ctx, call, c.task)
		}
		res, err := s.gateway.CallTool(ctx, call)
		reply.log.setResult(res)
		if err != nil {
			return nil, err
		}
		return encodeResult(name, res)
	})
}

// encodeResult encodes a tool's result.
func encodeResult(name string, res *mcpgate.Result) ([]byte, error) {
	if res == nil {
		return nil, fmt.Errorf("tool %q: gateway returned neither result nor error", name)
	}
	result, err := res.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode result of tool %q: %w", name, err)
	}
	return result, nil
}

// runRequest runs request m, which may stream and be cancelled, with do:
// m is in flight under its id meanwhile (so that notifications/cancelled
// reaches do's context), with reply as its Notifier and token as its
// progress token. It returns m's response: do's result, do's error, or
// -32800 with cancelled set when the context was canceled; or, when the id
// is already in flight, a -32600 error without running do.
func (s *Server) runRequest(ls *liveSession, m *message, reply *callReply, token json.RawMessage, do func(ctx context.Context) ([]byte, error)) (resp []byte, cancelled bool) {
	reply.token = token
	key := idKey(m.ID)
	callCtx, ok := ls.startCall(key)
	if !ok {
		return appendError(nil, m.ID, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s is already used by a call in flight", m.ID)}), false
	}
	defer ls.endCall(key, reply, callCtx)
	var ctx context.Context = callCtx
	if reply.traceparent != "" {
		ctx = s.tracer.Join(ctx, reply.traceparent, reply.tracestate)
	}
	result, err := do(ctx)
	reply.log.err = err
	switch {
	case ctx.Err() != nil:
		return appendError(nil, m.ID, &rpcError{Code: codeCancelled, Message: "Request cancelled"}), true
	case err != nil:
		return s.errorResponse(ls, m, err), false
	case modern(ls.version):
		result = s.modernResult(m.method, result)
	}
	return appendResult(nil, m.ID, result), false
}

// callReply is the reply to one tools/call, or relayed request, in flight.
// It is the call's Notifier and ClientRequester: the first notification or
// request that must reach the client turns the HTTP response into an SSE
// stream (when the client accepts one), and the result ends that stream.
// It is safe for concurrent use, and never waits for the client: events are
// queued for the stream's pump.
type callReply struct {
	s     *Server
	ls    *liveSession
	r     *http.Request
	w     http.ResponseWriter // nil in a batch, which cannot stream
	acc   accepts
	token json.RawMessage // progress token of the request, if any
	log   access          // what the access log says of the request
	// traceparent and tracestate are the request span's, when traced.
	traceparent, tracestate string

	// paused is closed when PauseStream ended the reply's stream, for a
	// reply that may pause on a connection it cannot cut (see cuttable);
	// nil for other replies.
	paused chan struct{}
	// cut is set for a reply that may pause on an HTTP/1.x connection:
	// PauseStream ends the response itself (see cutResponse).
	cut bool
	// held is the 2026-07-28 call the reply belongs to, whose server→client
	// requests wait for the client's retry; nil for other replies.
	held *heldCall

	// deferring is set, before the request runs, for a reply whose
	// handler runs the deferred work (Defer) once the reply went out.
	deferring bool

	mu         sync.Mutex
	st         *postStream
	done       bool
	progressed bool
	progress   float64
	deferred   []func() // Defer's, until runDeferred; in deferBuf for the first few
	deferBuf   [4]func()
	ranDefer   bool // runDeferred ran: Defer takes nothing more
}

var (
	_ mcpgate.Notifier        = (*callReply)(nil)
	_ mcpgate.ClientRequester = (*callReply)(nil)
	_ mcpgate.Deferrer        = (*callReply)(nil)
)

func (s *Server) newCallReply(r *http.Request, w http.ResponseWriter, ls *liveSession, acc accepts) *callReply {
	return &callReply{s: s, ls: ls, r: r, w: w, acc: acc}
}

// start opens the reply's SSE stream right away when the client wants SSE,
// so that its priming event goes out before the request runs. A reply that
// can stream to a client that resumes streams is made pausable if
// mayPause.
func (c *callReply) start(mayPause bool) *callReply {
	if c.w != nil && c.acc.wantsSSE() {
		c.st = c.s.openPostStream(c.w, c.r, c.ls)
	}
	if !mayPause || !c.canStream() || !primesStreams(c.ls.version) {
		return c
	}
	if cuttable(c.w, c.r) {
		c.cut = true
	} else {
		c.paused = make(chan struct{})
	}
	return c
}

// PauseStream ends the connection of the reply's SSE stream before the
// request has its result, advising the client to resume after retry
// (SEP-1699): what the request sends meanwhile waits in the session's
// replay for the client's GET with Last-Event-ID. A relayed upstream that
// closes its stream mid-request is mirrored this way. A reply on an
// HTTP/1.x connection has ended its response when PauseStream returns (see
// cutResponse). It does nothing for a reply that is not an open SSE
// stream, or that cannot pause.
func (c *callReply) PauseStream(retry time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if (c.paused == nil && !c.cut) || c.done || c.st == nil || !c.st.pause(retry) {
		return
	}
	if c.cut {
		<-c.st.pumped
		cutResponse(c.w, c.r, c.s.writeTimeout)
		return
	}
	select {
	case <-c.paused:
	default:
		close(c.paused)
	}
}

// canStream reports whether notifications can reach the client at all.
func (c *callReply) canStream() bool { return c.w != nil && c.acc.sse }

// WantsProgress reports whether Progress may send anything: the request
// carried a progress token and its reply can stream, or the call is held
// (a request attached to it later may have a token).
func (c *callReply) WantsProgress() bool {
	return c.held != nil || (c.token != nil && c.canStream())
}

// Progress sends notifications/progress when the request carried a
// progress token and progress increased; it drops it otherwise. A held
// call's go to the request attached to it, if any, under that request's
// progress token.
func (c *callReply) Progress(progress, total float64, message string) {
	if c.held != nil {
		if out := c.held.leg(); out != nil {
			out.Progress(progress, total, message)
		}
		return
	}
	if c.token == nil || !c.canStream() || !finite(progress) || !finite(total) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progressed && progress <= c.progress {
		return
	}
	c.progressed, c.progress = true, progress
	c.sendLocked(appendNotification(nil, "notifications/progress", progressParams(c.token, progress, total, message)))
}

// progressParams encodes the params of notifications/progress.
func progressParams(token json.RawMessage, progress, total float64, message string) []byte {
	b := append([]byte(`{"progressToken":`), token...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendFloat(b, progress, 'g', -1, 64)
	if total > 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendFloat(b, total, 'g', -1, 64)
	}
	if message != "" {
		m, _ := json.Marshal(message)
		b = append(b, `,"message":`...)
		b = append(b, m...)
	}
	return append(b, '}')
}

// Log sends notifications/message when level is at or above the session's
// log level (default info); it drops it otherwise, and when data does not
// encode as JSON. A held call's go to the request attached to it, if any,
// at that request's log level.
func (c *callReply) Log(level, logger string, data any) {
	if c.held != nil {
		if out := c.held.leg(); out != nil {
			out.Log(level, logger, data)
		}
		return
	}
	idx := levelIndex(level)
	if !c.canStream() || idx < 0 || int32(idx) < c.ls.level.Load() {
		return
	}
	params, err := json.Marshal(struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{level, logger, data})
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sendLocked(appendNotification(nil, "notifications/message", params))
}

// sendLocked streams a notification, switching the response to SSE first
// if needed. Notifications after the result are dropped. c.mu must be held.
func (c *callReply) sendLocked(msg []byte) {
	if c.done {
		return
	}
	if c.st == nil {
		c.st = c.s.openPostStream(c.w, c.r, c.ls)
	}
	c.st.emit(msg)
}

// finish ends the reply with resp. On a stream already open, resp is its
// last event, except for a cancelled call, whose stream just ends. It
// returns false when the caller must still write resp as JSON.
func (c *callReply) finish(resp []byte, cancelled bool) bool {
	c.mu.Lock()
	c.done = true // later notifications are dropped; earlier ones are queued
	ps := c.st
	c.mu.Unlock()
	if ps != nil {
		if !cancelled {
			ps.emit(resp)
		}
		ps.end()
		return true
	}
	return false
}

// Defer runs f once the reply went out (mcpgate.Deferrer): it takes f
// only for a reply whose handler runs deferred work after writing it (one
// served on the handler's goroutine, not a batch's or a pausable one's),
// and only until that work ran.
func (c *callReply) Defer(f func()) bool {
	if !c.deferring {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ranDefer {
		return false
	}
	if c.deferred == nil {
		c.deferred = c.deferBuf[:0]
	}
	c.deferred = append(c.deferred, f)
	return true
}

// runDeferred runs the work Defer took, once the reply went out.
func (c *callReply) runDeferred() {
	c.mu.Lock()
	fs := c.deferred
	c.deferred, c.ranDefer = nil, true
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
