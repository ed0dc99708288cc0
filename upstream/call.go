package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReportsProgress reports true: the upstream's own progress notifications
// reach the caller, and the pipeline adds none.
func (m *Manager) ReportsProgress() bool { return true }

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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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

// sessionMissing reports whether err says the upstream did not know the
// session (HTTP 404). The SDK formats that error into text on its way.
func sessionMissing(err error) bool {
	return err != nil && (errors.Is(err, sdk.ErrSessionMissing) || strings.Contains(err.Error(), sdk.ErrSessionMissing.Error()))
}

// callTool sends the call on the session it belongs to, which it returns.
func (l *link) callTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, *session, error) {
	s, err := l.sessionFor(ctx, call.SessionID, call.Client)
	if err != nil {
		return nil, nil, err
	}
	token, end := s.begin(call)
	defer end()
	name := call.Tool.Upstream
	if name == "" {
		name = call.Tool.Name
	}
	args := call.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	if call.Trace.Parent != "" { // W3C trace context in _meta
		if params.Meta == nil {
			params.Meta = sdk.Meta{}
		}
		call.Trace.SetHeaders(func(k, v string) { params.Meta[k] = v })
	}
	n := call.Notifier
	if n == nil {
		n = mcpgate.NopNotifier{}
	}
	var isError bool
	raw, err := s.notifyingCall(ctx, n, token, func(ctx context.Context) (any, error) {
		res, err := s.cs.CallTool(ctx, params)
		if res != nil {
			isError = res.IsError
		}
		return res, err
	})
	if err != nil {
		return nil, s, err
	}
	return &mcpgate.Result{Raw: raw, IsError: isError}, s, nil
}

// call runs one request of the SDK session under a capture and returns
// the upstream's raw result. Should the capture miss (a transport path it
// does not see), the SDK's typed result is encoded instead.
func (s *session) call(ctx context.Context, send func(ctx context.Context) (any, error)) (json.RawMessage, error) {
	return s.notifyingCall(ctx, nil, "", send)
}

// notifyingCall is call whose request's progress (with token) and log
// messages go to n. An error response of the upstream is an
// *mcpgate.RPCError.
func (s *session) notifyingCall(ctx context.Context, n mcpgate.Notifier, token string, send func(ctx context.Context) (any, error)) (json.RawMessage, error) {
	cctx, cp := withNotifyingCapture(ctx, n, token)
	defer cp.done()
	res, err := send(cctx)
	if rpc := cp.upstreamError(); rpc != nil {
		return nil, rpc
	}
	if lost := cp.lostError(); err != nil && lost != nil {
		return nil, lost
	}
	if err != nil {
		return nil, err
	}
	if raw := cp.result(); raw != nil {
		return raw, nil
	}
	return json.Marshal(res)
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
