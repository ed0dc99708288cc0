//lint:file-ignore SA1019 The gateway serves MCP 2025-11-25, where logging, roots and sampling are current; the SDK marks them deprecated only for 2026-07-28.

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one upstream MCP session: an SDK ClientSession over Streamable
// HTTP or over a child process's stdio.
type session struct {
	cs     *sdk.ClientSession
	child  *child                  // the stdio server, nil for HTTP
	caps   *sdk.ClientCapabilities // what the gateway declared on it
	closed chan struct{}           // closed once the session has ended
	err    error                   // why it ended, once closed is closed
	events *events

	mu    sync.Mutex
	calls []*inflight // calls in flight, oldest first
	seq   atomic.Int64
}

// events is what a session tells its link about.
type events struct {
	toolsChanged    func()
	listChanged     func(method string)
	resourceUpdated func(uri string, params json.RawMessage)
}

// inflight is a tools/call in flight on a session.
type inflight struct {
	token  string
	client mcpgate.ClientRequester
}

// protocolVersion is the revision the gateway asks upstreams for: the one
// it serves downstream, with sessions and server→client requests (the SDK
// would otherwise try the stateless 2026-07-28 revision first, where an
// upstream cannot send sampling or elicitation requests during a call).
const protocolVersion = "2025-11-25"

// serverToClient lists the upstream requests relayed to the MCP host.
var serverToClient = map[string]bool{"sampling/createMessage": true, "elicitation/create": true, "roots/list": true}

// dialOptions is what a new session needs.
type dialOptions struct {
	skill  *mcpgate.Skill
	m      *Manager
	caps   *sdk.ClientCapabilities
	events *events
}

// dial connects a new session to the skill's upstream and initializes it.
// Errors carry EUNAVAILABLE (or EINVALID for a skill that cannot work) and
// name the skill.
func dial(ctx context.Context, o *dialOptions) (*session, error) {
	s := &session{closed: make(chan struct{}), events: o.events, caps: o.caps}
	client := sdk.NewClient(&sdk.Implementation{Name: o.m.clientName, Version: o.m.clientVersion}, &sdk.ClientOptions{
		Logger:                 o.m.log,
		Capabilities:           o.caps,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.events.toolsChanged() },
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			s.events.listChanged("notifications/prompts/list_changed")
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			s.events.listChanged("notifications/resources/list_changed")
		},
		ResourceUpdatedHandler: s.resourceUpdated,
	})
	client.AddReceivingMiddleware(s.relayClientRequests)
	t, err := s.transport(o)
	if err != nil {
		return nil, err
	}
	cs, err := client.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		if s.child != nil {
			s.child.stop()
		}
		return nil, unavailable(o.skill, err)
	}
	s.cs = cs
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
		// Without a level some servers send no log messages at all; the
		// downstream side filters by each session's own level.
		_ = cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"})
	}
	go s.watch()
	return s, nil
}

// transport returns the SDK transport for the skill: Streamable HTTP
// through the SSRF guard, or a new child process.
func (s *session) transport(o *dialOptions) (sdk.Transport, error) {
	sk := o.skill
	if sk.URL == "" {
		if sk.Command == "" {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: an mcp skill needs a url or a command", sk.Name)
		}
		c, err := startChild(sk, o.m.lookup, o.m.log.With("agent", sk.AgentID, "skill", sk.Name))
		if err != nil {
			return nil, err
		}
		s.child = c
		return c.transport(), nil
	}
	policy := netguard.Policy{AllowPrivate: sk.AllowPrivate}
	if err := policy.CheckURL(sk.URL); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "skill %q: %v", sk.Name, err)
	}
	headers, err := expandHeaders(sk, o.m.lookup)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(sk.URL)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: url: %v", sk.Name, err)
	}
	hc := *o.m.guard.Client(policy)
	hc.Transport = &captureTransport{next: hc.Transport, headers: headers, origin: u.Scheme + "://" + u.Host}
	return &sdk.StreamableClientTransport{Endpoint: sk.URL, HTTPClient: &hc, MaxRetries: -1}, nil
}

// expandHeaders fills the secrets of the skill's headers.
func expandHeaders(sk *mcpgate.Skill, lookup mcpgate.LookupFunc) (map[string]string, error) {
	out := make(map[string]string, len(sk.Headers))
	for k, v := range sk.Headers {
		val, err := mcpgate.ExpandSecrets(v, lookup)
		if err != nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: header %s: %s", sk.Name, k, mcpgate.ErrorMessage(err))
		}
		out[http.CanonicalHeaderKey(k)] = val
	}
	return out, nil
}

// watch waits for the session to end, then stops its child.
func (s *session) watch() {
	s.err = s.cs.Wait()
	if s.child != nil {
		s.child.stop()
		s.err = s.child.err
	}
	if s.err == nil {
		s.err = errors.New("the connection closed")
	}
	close(s.closed)
}

// endErr says why the session ended; call it once closed is closed.
func (s *session) endErr() error { return s.err }

// alive reports whether the session has not ended.
func (s *session) alive() bool {
	select {
	case <-s.closed:
		return false
	default:
		return true
	}
}

// close ends the session and waits until it has.
func (s *session) close() {
	_ = s.cs.Close()
	<-s.closed
}

// begin registers a call in flight and returns its progress token and a
// function that unregisters it.
func (s *session) begin(call *mcpgate.Call) (string, func()) {
	f := &inflight{token: "mcpgate-" + strconv.FormatInt(s.seq.Add(1), 10), client: call.Client}
	s.mu.Lock()
	s.calls = append(s.calls, f)
	s.mu.Unlock()
	return f.token, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, c := range s.calls {
			if c == f {
				s.calls = append(s.calls[:i], s.calls[i+1:]...)
				return
			}
		}
	}
}

// latest returns the most recent call in flight, or nil. Server→client
// requests carry no reference to the call that caused them, so they go to
// the newest one.
func (s *session) latest() *inflight {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return nil
	}
	return s.calls[len(s.calls)-1]
}

// resourceUpdated passes notifications/resources/updated to the link.
func (s *session) resourceUpdated(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	params, err := json.Marshal(req.Params)
	if err == nil {
		s.events.resourceUpdated(req.Params.URI, params)
	}
}

// rawResult is a result relayed as the bytes the MCP host sent.
type rawResult struct {
	sdk.ResultBase
	raw json.RawMessage
}

// MarshalJSON writes the relayed bytes.
func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// relayClientRequests answers the upstream's sampling, elicitation and
// roots requests by asking the MCP host behind the newest call in flight.
func (s *session) relayClientRequests(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if !serverToClient[method] {
			return next(ctx, method, req)
		}
		if !s.declared(method) {
			// Above all on the pooled session, whose calls come from many
			// MCP hosts: the newest call's host is not the one asked.
			return nil, &jsonrpc.Error{Code: -32601, Message: "the client did not declare the capability for " + method + " on this session"}
		}
		c := s.latest()
		if c == nil || c.client == nil {
			return nil, &jsonrpc.Error{Code: -32601, Message: "no MCP client can answer " + method + " now"}
		}
		params, err := json.Marshal(req.GetParams())
		if err != nil {
			return nil, err
		}
		raw, err := c.client.RequestClient(ctx, method, params)
		var rpc *mcpgate.RPCError
		if errors.As(err, &rpc) {
			return nil, &jsonrpc.Error{Code: int64(rpc.Code), Message: rpc.Message, Data: rpc.Data}
		} else if err != nil {
			return nil, &jsonrpc.Error{Code: -32603, Message: mcpgate.ErrorMessage(err)}
		}
		return &rawResult{raw: raw}, nil
	}
}

// declared reports whether the gateway declared the capability a
// server→client request needs on the session.
func (s *session) declared(method string) bool {
	if s.caps == nil {
		return false
	}
	switch method {
	case "sampling/createMessage":
		return s.caps.Sampling != nil
	case "elicitation/create":
		return s.caps.Elicitation != nil
	case "roots/list":
		return s.caps.RootsV2 != nil
	}
	return false
}

// clientCaps turns the capabilities an MCP host declared into those the
// gateway declares upstream: only what the host can answer, and nothing
// for a pooled session (caps nil).
func clientCaps(caps json.RawMessage) *sdk.ClientCapabilities {
	out := &sdk.ClientCapabilities{}
	var in struct {
		Roots       json.RawMessage `json:"roots"`
		Sampling    json.RawMessage `json:"sampling"`
		Elicitation json.RawMessage `json:"elicitation"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &in) != nil {
		return out
	}
	if isObject(in.Roots) {
		out.RootsV2 = &sdk.RootCapabilities{}
	}
	if isObject(in.Sampling) {
		out.Sampling = &sdk.SamplingCapabilities{}
		_ = json.Unmarshal(in.Sampling, out.Sampling)
	}
	if isObject(in.Elicitation) {
		out.Elicitation = &sdk.ElicitationCapabilities{}
		_ = json.Unmarshal(in.Elicitation, out.Elicitation)
	}
	return out
}

// wantsOwnSession reports whether a host's capabilities call for an
// upstream session of its own.
func wantsOwnSession(c mcpgate.ClientRequester) bool {
	if c == nil {
		return false
	}
	caps := clientCaps(c.ClientCapabilities())
	return caps.RootsV2 != nil || caps.Sampling != nil || caps.Elicitation != nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{'
}
