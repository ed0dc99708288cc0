package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/lazyctx"
	"github.com/mcpgate/mcpgate/mcpclient"
)

// ReportsProgress reports true: the upstream's own progress notifications
// reach the caller, and the pipeline adds none.
func (m *Manager) ReportsProgress() bool { return true }

// EndsCallsAtTimeout reports true: CallTool ends a call at its skill's
// timeout with ETIMEOUT, so the pipeline sets no deadline of its own.
func (m *Manager) EndsCallsAtTimeout() bool { return true }

// CallTool calls the tool on the skill's upstream under its upstream name
// and returns the upstream's CallToolResult as it was sent (Result.Raw);
// a tool failure is the upstream's own isError result. Upstream progress
// and log messages reach call.Notifier; sampling, elicitation and roots
// requests reach call.Client. A JSON-RPC error of the upstream comes back
// as an *mcpgate.RPCError; an upstream that cannot be reached is
// EUNAVAILABLE naming the skill, one that does not answer within the
// skill's timeout ETIMEOUT, and a caller that cancels ECANCELED (the
// upstream is told with notifications/cancelled).
func (m *Manager) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	sk := call.Skill
	l := m.linkFor(sk)
	if l == nil {
		return nil, unavailable(sk, errStopped)
	}
	timeout := sk.CallTimeout()
	dl := lazyctx.WithDeadline(ctx, time.Now().Add(timeout)) // made only if something waits on it
	defer endDeadline(call.Notifier, dl)
	ctx = dl
	res, s, err := l.callTool(ctx, call)
	if s != nil && sessionMissing(err) {
		// The upstream forgot the session before it saw the call: once
		// the old session has ended, a new one is initialized and the
		// call goes again. (No session means that none could be
		// initialized: nothing to retry.)
		select {
		case <-s.closed:
			res, _, err = l.callTool(ctx, call)
		case <-ctx.Done():
		}
	}
	if err != nil {
		return nil, callError(ctx, sk, err, timeout)
	}
	l.health.called()
	return res, nil
}

// endDeadline ends a call's deadline context; the timer of one that was
// made stops after the reply (it is not the reply's wait).
func endDeadline(n mcpgate.Notifier, dl *lazyctx.Context) {
	if stop := dl.End(); stop != nil {
		mcpgate.AfterReply(n, stop)
	}
}

// sessionMissing reports whether err says the upstream did not know the
// session (HTTP 404).
func sessionMissing(err error) bool { return errors.Is(err, mcpclient.ErrSessionMissing) }

// callTool sends the call on the session it belongs to, which it returns.
func (l *link) callTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, *session, error) {
	s, err := l.sessionFor(ctx, call.SessionID, call.Client)
	if err != nil {
		return nil, nil, err
	}
	defer s.end(s.begin(call))
	name := call.Tool.Upstream
	if name == "" {
		name = call.Tool.Name
	}
	n := call.Notifier
	if n == nil {
		n = mcpgate.NopNotifier{}
	}
	var token string // the upstream is asked for progress only when it goes somewhere
	if mcpgate.WantsProgress(n) {
		token = s.progressToken()
	}
	opts := tracedOptions(n, token, call.Trace)
	if s.cs.Stateless() {
		opts = withParamHeaders(opts, call.Tool.InputSchema, call.Arguments)
	}
	raw, err := s.call(ctx, "tools/call", callParams(name, call.Arguments, token, call.Trace), opts, call.Client)
	if err != nil {
		return nil, s, err
	}
	return &mcpgate.Result{Raw: raw, IsError: isError(raw)}, s, nil
}

// callParams are the params of a tools/call: the tool's upstream name, the
// arguments as the caller sent them ({} when none) and, in _meta, the
// progress token when there is one and the W3C trace context when tracing
// is on. With neither, there is no _meta.
func callParams(name string, args json.RawMessage, token string, tc mcpgate.TraceContext) json.RawMessage {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	b := make([]byte, 0, len(args)+len(name)+len(token)+64)
	b = append(b, `{"name":`...)
	b = mcpgate.AppendJSONString(b, name)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	meta := false // whether _meta has been opened
	member := func(k string) {
		if meta {
			b = append(b, ',')
		} else {
			b = append(b, `,"_meta":{`...)
			meta = true
		}
		b = mcpgate.AppendJSONString(b, k)
		b = append(b, ':')
	}
	if token != "" {
		member("progressToken")
		b = mcpgate.AppendJSONString(b, token)
	}
	tc.SetHeaders(func(k, v string) {
		member(k)
		b = mcpgate.AppendJSONString(b, v)
	})
	if meta {
		b = append(b, '}')
	}
	return append(b, '}')
}

// isError reads a CallToolResult's isError, looking only when the member
// is there.
func isError(raw json.RawMessage) bool {
	if !bytes.Contains(raw, []byte(`"isError"`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.IsError
}

// request sends one request on the session and returns the upstream's
// result as it sent it; an error response is an *mcpgate.RPCError. The
// request's progress (with token) and log messages go to n, when not nil,
// in order and before the result, and so does a pause of its stream.
func (s *session) request(ctx context.Context, method string, params json.RawMessage, n mcpgate.Notifier, token string) (json.RawMessage, error) {
	return s.cs.Call(ctx, method, params, callOptions(n, token))
}

// callOptions are the options of a request whose progress (with token)
// and log messages go to n; nil when n is.
func callOptions(n mcpgate.Notifier, token string) *mcpclient.CallOptions {
	if n == nil {
		return nil
	}
	opts := &mcpclient.CallOptions{
		ProgressToken: token,
		Notify:        func(method string, params json.RawMessage) { notify(n, token, method, params) },
	}
	if p, ok := n.(pauser); ok {
		opts.Paused = p.PauseStream
	}
	return opts
}

// tracedOptions are callOptions sending the W3C trace context, when there
// is one, as HTTP headers.
func tracedOptions(n mcpgate.Notifier, token string, tc mcpgate.TraceContext) *mcpclient.CallOptions {
	opts := callOptions(n, token)
	if tc.Parent == "" {
		return opts
	}
	if opts == nil {
		opts = &mcpclient.CallOptions{}
	}
	opts.Header = http.Header{}
	tc.SetHeaders(opts.Header.Set)
	return opts
}

// pauser is a Notifier whose client can be asked to come back for the rest
// of the request's messages (SEP-1699): its stream ends now, advising it
// to resume after retry. The gateway's client then sees what the
// upstream's would when the upstream ends a stream on purpose.
type pauser interface {
	PauseStream(retry time.Duration)
}

// notify passes a progress notification with the call's token, or a log
// message, to n; others are dropped.
func notify(n mcpgate.Notifier, token, method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		var p struct {
			Token    any     `json:"progressToken"`
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		}
		if token != "" && json.Unmarshal(params, &p) == nil && p.Token == token {
			n.Progress(p.Progress, p.Total, p.Message)
		}
	case "notifications/message":
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(params, &p) == nil {
			n.Log(p.Level, p.Logger, p.Data)
		}
	}
}

// callError maps an error of a relayed request to what the caller sees.
func callError(ctx context.Context, sk *mcpgate.Skill, err error, timeout time.Duration) error {
	var rpc *mcpgate.RPCError
	var coded *mcpgate.Error
	switch {
	case errors.As(err, &rpc):
		return rpc
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %v", mcpgate.Errorf(mcpgate.ETIMEOUT, "skill %q: the upstream MCP server did not answer within %s", sk.Name, timeout), err)
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %v", mcpgate.Errorf(mcpgate.ECANCELED, "the request was canceled"), err)
	case errors.As(err, &coded):
		return err
	}
	return unavailable(sk, err)
}
