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
	"github.com/mcpgate/mcpgate/mcpclient"
	"github.com/mcpgate/mcpgate/netguard"
)

// session is one upstream MCP session: an mcpclient.Session over Streamable
// HTTP or over a child process's stdio.
type session struct {
	cs     *mcpclient.Session
	child  *child     // the stdio server, nil for HTTP
	caps   clientCaps // what the gateway declared on it
	closed chan struct{}
	err    error // why it ended, once closed is closed
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
	client mcpgate.ClientRequester
}

// progressToken returns a new progress token of the session.
func (s *session) progressToken() string {
	var buf [32]byte
	return string(strconv.AppendInt(append(buf[:0], "mcpgate-"...), s.seq.Add(1), 10))
}

// serverToClient lists the upstream requests relayed to the MCP host.
var serverToClient = map[string]bool{"sampling/createMessage": true, "elicitation/create": true, "roots/list": true}

// dialOptions is what a new session needs.
type dialOptions struct {
	skill  *mcpgate.Skill
	m      *Manager
	caps   clientCaps
	events *events
}

// dial connects a new session to the skill's upstream and initializes it,
// asking for protocol mcpclient.ProtocolVersion. Errors carry EUNAVAILABLE
// (or EINVALID for a skill that cannot work) and name the skill.
func dial(ctx context.Context, o *dialOptions) (*session, error) {
	s := &session{closed: make(chan struct{}), events: o.events, caps: o.caps}
	t, err := s.transport(o)
	if err != nil {
		return nil, err
	}
	cs, err := mcpclient.Connect(ctx, t, &mcpclient.Options{
		Name: o.m.clientName, Version: o.m.clientVersion, Capabilities: o.caps.raw(),
		Notify: s.notified, Request: s.relayClientRequest, Logger: o.m.log,
		// Without a level some servers send no log messages at all; the
		// downstream side filters by each session's own level.
		LogLevel: "debug",
	})
	if err != nil {
		if s.child != nil {
			s.child.stop()
		}
		return nil, unavailable(o.skill, err)
	}
	s.cs = cs
	if parseServerCaps(cs.Capabilities()).Logging != nil && !cs.Stateless() {
		// As LogLevel above, for the revisions with logging/setLevel.
		_, _ = cs.Call(ctx, "logging/setLevel", json.RawMessage(`{"level":"debug"}`), nil)
	}
	go s.watch()
	return s, nil
}

// transport returns the client transport for the skill: Streamable HTTP
// through the SSRF guard, or a new child process.
func (s *session) transport(o *dialOptions) (mcpclient.Transport, error) {
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
		return mcpclient.NewStdio(c.stdout, c.stdin), nil
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
	hc.Transport = o.m.transport(policy)
	if len(headers) > 0 {
		hc.Transport = &headerTransport{next: hc.Transport, headers: headers, origin: u.Scheme + "://" + u.Host}
	}
	return mcpclient.NewHTTP(sk.URL, &hc, nil), nil
}

// headerTransport sets a skill's headers on the requests to its upstream.
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
	// origin is the skill URL's scheme and host: the headers, which may
	// hold secrets, never go anywhere else, not even after a redirect.
	origin string
}

// RoundTrip sends req with the headers when it goes to the origin.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme+"://"+req.URL.Host == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(req)
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

// watch waits for the session to end (or its child to exit), then stops
// its child.
func (s *session) watch() {
	var exited <-chan struct{}
	if s.child != nil {
		exited = s.child.exited
	}
	select {
	case <-s.cs.Done():
	case <-exited:
		_ = s.cs.Close()
	}
	s.err = s.cs.Err()
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

// begin registers a call in flight; end unregisters it.
func (s *session) begin(call *mcpgate.Call) *inflight {
	f := &inflight{client: call.Client}
	s.mu.Lock()
	s.calls = append(s.calls, f)
	s.mu.Unlock()
	return f
}

// end unregisters the call f began.
func (s *session) end(f *inflight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.calls {
		if c == f {
			s.calls = append(s.calls[:i], s.calls[i+1:]...)
			return
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

// notified passes the upstream's list_changed and resources/updated
// notifications to the link.
func (s *session) notified(method string, params json.RawMessage) {
	switch method {
	case "notifications/tools/list_changed":
		s.events.toolsChanged()
	case "notifications/prompts/list_changed", "notifications/resources/list_changed":
		s.events.listChanged(method)
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(params, &p) == nil && p.URI != "" {
			s.events.resourceUpdated(p.URI, params)
		}
	}
}

// relayClientRequest answers the upstream's sampling, elicitation and
// roots requests by asking the MCP host behind the newest call in flight;
// the host's answer goes back as it is.
func (s *session) relayClientRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if !serverToClient[method] {
		return nil, &mcpgate.RPCError{Code: -32601, Message: "method not found: " + method}
	}
	if !s.caps.declares(method) {
		// Above all on the pooled session, whose calls come from many
		// MCP hosts: the newest call's host is not the one asked.
		return nil, &mcpgate.RPCError{Code: -32601, Message: "the client did not declare the capability for " + method + " on this session"}
	}
	c := s.latest()
	if c == nil || c.client == nil {
		return nil, &mcpgate.RPCError{Code: -32601, Message: "no MCP client can answer " + method + " now"}
	}
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	raw, err := c.client.RequestClient(ctx, method, params)
	var rpc *mcpgate.RPCError
	if errors.As(err, &rpc) {
		return nil, rpc
	} else if err != nil {
		return nil, &mcpgate.RPCError{Code: -32603, Message: mcpgate.ErrorMessage(err)}
	}
	return raw, nil
}

// transport is the round tripper of policy's upstreams: plain-HTTP ones
// over h1's keep-alive connections, each request on its caller's
// goroutine; HTTPS ones (and redirects there) through the guard's
// net/http transport, with HTTP/2. Both dial through the guard.
func (m *Manager) transport(policy netguard.Policy) http.RoundTripper {
	if policy.AllowPrivate {
		return m.plain[1]
	}
	return m.plain[0]
}
