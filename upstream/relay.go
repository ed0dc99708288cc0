package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// nsScheme starts a resource URI that had to be namespaced because two
// skills of one agent offer it: "mcpgate:<skill>/<upstream URI>".
const nsScheme = "mcpgate:"

// agentNames remembers, from the last listing of each kind, which skill
// offers each prompt name, resource URI and URI template an agent serves.
// Each listing replaces its table, so names an upstream no longer lists
// are forgotten.
type agentNames struct {
	mu        sync.Mutex
	tables    map[string]map[string]route // by listing method, then served name
	templates []templateRoute             // the served templates, most specific first
}

// route is where a served name goes: a skill and its upstream's name.
type route struct {
	skill    string
	upstream string
}

// templateRoute is a served URI template and the skill whose upstream
// lists it.
type templateRoute struct {
	tmpl  *uriTemplate
	skill string
}

// agentNames returns the agent's name table.
func (m *Manager) agentNames(agentID string) *agentNames {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.names[agentID]
	if n == nil {
		n = &agentNames{tables: map[string]map[string]route{}}
		m.names[agentID] = n
	}
	return n
}

// Capabilities returns the union of what the agent's mcp skills' upstreams
// offer besides tools, as initialize capabilities: "resources" (with
// subscribe and listChanged), "prompts" (with listChanged) and
// "completions". Upstreams not yet connected add nothing.
func (m *Manager) Capabilities(agentID string) map[string]json.RawMessage {
	var res, prompts, completions bool
	var subscribe, resChanged, promptsChanged bool
	for _, l := range m.agentLinks(agentID) {
		l.mu.Lock()
		c := l.caps
		l.mu.Unlock()
		if c == nil {
			continue
		}
		if c.Resources != nil {
			res, subscribe, resChanged = true, subscribe || c.Resources.Subscribe, resChanged || c.Resources.ListChanged
		}
		if c.Prompts != nil {
			prompts, promptsChanged = true, promptsChanged || c.Prompts.ListChanged
		}
		completions = completions || c.Completions != nil
	}
	out := map[string]json.RawMessage{}
	if res {
		out["resources"] = mustJSON(map[string]bool{"subscribe": subscribe, "listChanged": resChanged})
	}
	if prompts {
		out["prompts"] = mustJSON(map[string]bool{"listChanged": promptsChanged})
	}
	if completions {
		out["completions"] = json.RawMessage(`{}`)
	}
	return out
}

// mustJSON encodes a value that always encodes.
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// Relay passes a client request other than tools/call to the agent's mcp
// skills: listings gather every skill's items (every page; names and URIs
// two skills share are namespaced), the others go to the skill that offers
// the name or URI. An upstream's JSON-RPC error comes back as an
// *mcpgate.RPCError; an unknown method or a request no skill can take is
// ENOTFOUND.
func (m *Manager) Relay(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	agentID := f.Agent.ID
	switch f.Method {
	case "resources/list":
		return m.list(ctx, agentID, resourceListing)
	case "resources/templates/list":
		return m.list(ctx, agentID, templateListing)
	case "prompts/list":
		return m.list(ctx, agentID, promptListing)
	case "resources/read":
		return m.readResource(ctx, f)
	case "resources/subscribe", "resources/unsubscribe":
		return m.subscription(ctx, f)
	case "prompts/get":
		return m.getPrompt(ctx, f)
	case "completion/complete":
		return m.complete(ctx, f)
	}
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "method %q is not relayed", f.Method)
}

// relayed runs one request on the link's pooled session, mapping errors
// for the caller, with trace context tc as HTTP headers when set. The
// upstream's log messages about the request, and a pause of its stream,
// reach n when it is not nil. On a stateless upstream the input it asks
// for goes to client (see session.call), which may be nil.
func (l *link) relayed(ctx context.Context, n mcpgate.Notifier, client mcpgate.ClientRequester, method string, params json.RawMessage, tc mcpgate.TraceContext) (json.RawMessage, error) {
	sk := l.current()
	timeout := sk.CallTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := l.mainSession(ctx)
	if err != nil {
		return nil, callError(ctx, sk, err, timeout)
	}
	raw, err := s.call(ctx, method, params, tracedOptions(n, "", tc), client)
	if err != nil {
		return nil, callError(ctx, sk, err, timeout)
	}
	return raw, nil
}

// relayedAsking relays a request during which the upstream may ask the
// client for input (prompts/get, resources/read). A held 2026-07-28
// call's (its client names a scope) goes on the call's own upstream
// session, registered as in flight there so that the upstream's requests
// reach the call; every other request goes on the pooled session, as
// relayed does.
func (l *link) relayedAsking(ctx context.Context, f *mcpgate.Forward, params json.RawMessage) (json.RawMessage, error) {
	if scopeOf(f.Client) == "" || !wantsOwnSession(f.Client) || l.stateless() {
		return l.relayed(ctx, f.Notifier, f.Client, f.Method, params, f.Trace)
	}
	sk := l.current()
	timeout := sk.CallTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := l.sessionFor(ctx, "", f.Client)
	if err != nil {
		return nil, callError(ctx, sk, err, timeout)
	}
	flight := s.begin(&mcpgate.Call{Client: f.Client})
	defer s.end(flight)
	raw, err := s.cs.Call(ctx, f.Method, params, tracedOptions(f.Notifier, "", f.Trace))
	if err != nil {
		return nil, callError(ctx, sk, err, timeout)
	}
	return raw, nil
}

// decodeParams reads the members of a relayed request's params the
// gateway routes by.
func decodeParams(raw json.RawMessage, into any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return mcpgate.Errorf(mcpgate.EINVALID, "invalid params: %v", err)
	}
	return nil
}

// linkNamed returns the agent's link of the named skill, or nil.
func (m *Manager) linkNamed(agentID, skill string) *link {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links[linkKey{agentID, skill}]
}

// routeURI finds the skill that serves a resource URI and the URI its
// upstream knows it by: a namespaced URI goes to its skill, any other to
// the skill listing it as a resource, else to the skill listing a URI
// template it is an expansion of (see findURI).
func (m *Manager) routeURI(ctx context.Context, agentID, uri string) (*link, string, error) {
	if rest, ok := strings.CutPrefix(uri, nsScheme); ok {
		skill, upstream, _ := strings.Cut(rest, "/")
		if l := m.linkNamed(agentID, skill); l != nil {
			return l, upstream, nil
		}
	}
	return m.routeBy(ctx, agentID, uri, (*agentNames).findURI, resourceListing, templateListing)
}

// routePrompt finds the skill that serves a prompt name and its upstream
// name.
func (m *Manager) routePrompt(ctx context.Context, agentID, name string) (*link, string, error) {
	return m.routeBy(ctx, agentID, name, (*agentNames).findPrompt, promptListing)
}

// routeBy looks served up in the agent's tables with find, listing again
// once when it is unknown; with a single skill everything goes to it.
func (m *Manager) routeBy(ctx context.Context, agentID, served string, find func(*agentNames, string) (route, bool), refresh ...*listing) (*link, string, error) {
	links := m.agentLinks(agentID)
	if len(links) == 1 {
		return links[0], served, nil
	}
	names := m.agentNames(agentID)
	for attempt := range 2 {
		if r, ok := find(names, served); ok {
			if l := m.linkNamed(agentID, r.skill); l != nil {
				return l, r.upstream, nil
			}
		}
		if attempt == 0 {
			for _, ls := range refresh {
				_, _ = m.list(ctx, agentID, ls)
			}
		}
	}
	return nil, "", mcpgate.Errorf(mcpgate.ENOTFOUND, "no skill of agent %q offers %q", agentID, served)
}

// findPrompt returns the route of a served prompt name.
func (n *agentNames) findPrompt(name string) (route, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.tables[promptListing.method][name]
	return r, ok
}

// findURI returns the route of a served URI: a listed resource, else a
// listed template itself (as completion refers to it), else the most
// specific template (longest literal prefix) the URI is an expansion of.
// A template two skills list is served namespaced only, so an expansion
// of the bare template is ambiguous and found nowhere.
func (n *agentNames) findURI(uri string) (route, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ls := range []*listing{resourceListing, templateListing} {
		if r, ok := n.tables[ls.method][uri]; ok {
			return r, true
		}
	}
	for _, t := range n.templates {
		if t.tmpl.match(uri) {
			return route{skill: t.skill, upstream: uri}, true
		}
	}
	return route{}, false
}

// readResource relays resources/read to the skill offering the URI.
func (m *Manager) readResource(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := decodeParams(f.Params, &p); err != nil {
		return nil, err
	}
	l, uri, err := m.routeURI(ctx, f.Agent.ID, p.URI)
	if err != nil {
		return nil, err
	}
	return l.relayedAsking(ctx, f, renamed(f.Params, "uri", p.URI, uri))
}

// getPrompt relays prompts/get to the skill offering the prompt.
func (m *Manager) getPrompt(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	var p struct {
		Name string `json:"name"`
	}
	if err := decodeParams(f.Params, &p); err != nil {
		return nil, err
	}
	l, name, err := m.routePrompt(ctx, f.Agent.ID, p.Name)
	if err != nil {
		return nil, err
	}
	return l.relayedAsking(ctx, f, renamed(f.Params, "name", p.Name, name))
}

// complete relays completion/complete to the skill of the prompt or
// resource template it refers to.
func (m *Manager) complete(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	var p struct {
		Ref json.RawMessage `json:"ref"`
	}
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if err := decodeParams(f.Params, &p); err != nil {
		return nil, err
	}
	if !isObject(p.Ref) {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "invalid params: ref is required")
	}
	if err := decodeParams(p.Ref, &ref); err != nil {
		return nil, err
	}
	var l *link
	var err error
	var newRef json.RawMessage
	if ref.Type == "ref/prompt" {
		var name string
		l, name, err = m.routePrompt(ctx, f.Agent.ID, ref.Name)
		newRef = renamed(p.Ref, "name", ref.Name, name)
	} else {
		var uri string
		l, uri, err = m.routeURI(ctx, f.Agent.ID, ref.URI)
		newRef = renamed(p.Ref, "uri", ref.URI, uri)
	}
	if err != nil {
		return nil, err
	}
	params := f.Params
	if string(newRef) != string(p.Ref) {
		params = withRaw(f.Params, "ref", newRef)
	}
	return l.relayed(ctx, f.Notifier, f.Client, f.Method, params, f.Trace)
}

// subscription relays resources/subscribe and resources/unsubscribe: the
// upstream is subscribed while at least one downstream session is.
func (m *Manager) subscription(ctx context.Context, f *mcpgate.Forward) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := decodeParams(f.Params, &p); err != nil {
		return nil, err
	}
	l, uri, err := m.routeURI(ctx, f.Agent.ID, p.URI)
	if err != nil {
		return nil, err
	}
	subscribe := f.Method == "resources/subscribe"
	first, last := l.recordSubscription(uri, p.URI, f.SessionID, subscribe)
	if (subscribe && !first) || (!subscribe && !last) {
		return json.RawMessage(`{}`), nil
	}
	if l.stateless() {
		// The stateless revision has no resources/subscribe: the link's
		// subscriptions/listen stream asks for the URIs instead.
		l.restartListen()
		return json.RawMessage(`{}`), nil
	}
	_, err = l.relayed(ctx, nil, nil, f.Method, uriParams(uri), f.Trace)
	if err != nil && subscribe {
		l.recordSubscription(uri, p.URI, f.SessionID, false)
		return nil, err
	}
	return json.RawMessage(`{}`), nil
}

// recordSubscription adds or removes a downstream session's subscription
// and reports whether it was the first or the last one for the URI.
func (l *link) recordSubscription(uri, served, sessionID string, subscribe bool) (first, last bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	subs := l.subs[uri]
	if subscribe {
		if subs == nil {
			subs = map[string]string{}
			l.subs[uri] = subs
		}
		subs[sessionID] = served
		return len(subs) == 1, false
	}
	if _, ok := subs[sessionID]; !ok {
		return false, false
	}
	delete(subs, sessionID)
	if len(subs) == 0 {
		delete(l.subs, uri)
		return false, true
	}
	return false, false
}

// resubscribe subscribes a new pooled session to every URI downstream
// sessions are subscribed to.
func (l *link) resubscribe(s *session) {
	l.mu.Lock()
	uris := make([]string, 0, len(l.subs))
	for uri := range l.subs {
		uris = append(uris, uri)
	}
	l.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(l.ctx, l.current().CallTimeout())
		if _, err := s.request(ctx, "resources/subscribe", uriParams(uri), nil, ""); err != nil {
			l.m.log.Warn("upstream resubscribe failed", "skill", l.name(), "uri", uri, "err", err)
		}
		cancel()
	}
}

// unsubscribeAll unsubscribes the pooled session from URIs nobody follows
// any more.
func (l *link) unsubscribeAll(s *session, uris []string) {
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(l.ctx, 10*time.Second)
		_, _ = s.request(ctx, "resources/unsubscribe", uriParams(uri), nil, "")
		cancel()
	}
}

// resourceUpdated passes an upstream's notifications/resources/updated to
// the downstream sessions subscribed to the URI or to a URI it is a
// sub-resource of (see subResource), under the URI each subscribed as.
func (l *link) resourceUpdated(uri string, params json.RawMessage) {
	if l.m.sessions == nil {
		return
	}
	type target struct{ session, served, subscribed string }
	var targets []target
	l.mu.Lock()
	for sub, sessions := range l.subs {
		if sub == uri || subResource(uri, sub) {
			for sid, served := range sessions {
				targets = append(targets, target{sid, served, sub})
			}
		}
	}
	l.mu.Unlock()
	for _, t := range targets {
		p := params
		if t.served != t.subscribed {
			p = withField(params, "uri", t.served+uri[len(t.subscribed):])
		}
		l.m.sessions.NotifySession(t.session, "notifications/resources/updated", p)
	}
}

// subResource reports whether uri is under parent across a boundary:
// parent ends with "/", or uri goes on after it with "/", "#" or "?". So
// file:///a/b is under file:///a, file:///ab is not.
func subResource(uri, parent string) bool {
	rest, ok := strings.CutPrefix(uri, parent)
	if !ok || rest == "" {
		return false
	}
	return strings.HasSuffix(parent, "/") || strings.ContainsRune("/#?", rune(rest[0]))
}

// withField returns the JSON object raw with one string field set.
func withField(raw json.RawMessage, field, value string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	m[field] = mustJSON(value)
	return mustJSON(m)
}

// withRaw returns the JSON object raw with one member set to value.
func withRaw(raw json.RawMessage, field string, value json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	m[field] = value
	return mustJSON(m)
}

// renamed returns params with the string member field set to to, or
// params as they are when the name did not change.
func renamed(params json.RawMessage, field, from, to string) json.RawMessage {
	if from == to {
		return params
	}
	return withField(params, field, to)
}

// uriParams are the params of resources/subscribe and unsubscribe.
func uriParams(uri string) json.RawMessage {
	return mustJSON(map[string]string{"uri": uri})
}

// errNoRelay means a skill's upstream does not offer a listing.
var errNoRelay = errors.New("not offered")
