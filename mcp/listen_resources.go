package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate"
)

// Resource subscriptions on subscriptions/listen (2026-07-28, the
// resourceSubscriptions filter, in place of resources/subscribe): each URI
// is subscribed through the Relayer under the stream's own scope
// ("listen-" and a random id), as a session's resources/subscribe is under
// its session id; the relay's notifications/resources/updated for that
// scope (NotifySession) go out on the stream; when the stream ends the
// scope is released through Options.SessionClosed, which unsubscribes.

// maxListenURIs bounds the URIs one listen stream may subscribe to.
const maxListenURIs = 64

// subscribeResources subscribes l to the URIs it asked for, those the
// agent's resources capability allows (subscribe: true), and returns the
// ones subscribed, nil when none.
func (s *Server) subscribeResources(ctx context.Context, agent *mcpgate.Agent, cred *mcpgate.Credential, l *listener, raw json.RawMessage) []string {
	var uris []string
	if json.Unmarshal(raw, &uris) != nil || len(uris) == 0 || !s.subscribable(ctx, agent) {
		return nil
	}
	if len(uris) > maxListenURIs {
		uris = uris[:maxListenURIs]
	}
	l.scope = "listen-" + randomHex(12)
	var agreed []string
	for _, uri := range uris {
		params, _ := json.Marshal(struct {
			URI string `json:"uri"`
		}{uri})
		f := &mcpgate.Forward{Agent: agent, Method: "resources/subscribe", Params: params, Caller: cred.Caller(), SessionID: l.scope,
			Notifier: mcpgate.NopNotifier{}, Client: noClient{}}
		if _, err := s.relayer.Relay(ctx, f); err == nil {
			agreed = append(agreed, uri)
		}
	}
	return agreed
}

// subscribable reports whether the agent's resources can be subscribed to.
func (s *Server) subscribable(ctx context.Context, agent *mcpgate.Agent) bool {
	if s.relayer == nil {
		return false
	}
	caps, err := s.relayer.Capabilities(ctx, agent)
	if err != nil {
		return false
	}
	var r struct {
		Subscribe bool `json:"subscribe"`
	}
	return json.Unmarshal(caps["resources"], &r) == nil && r.Subscribe
}

// releaseResources ends l's subscriptions, if it has any.
func (s *Server) releaseResources(l *listener) {
	if l.scope != "" && s.sessionClosed != nil {
		go s.sessionClosed(l.scope)
	}
}

// notifyScope queues a notification for the listen stream whose scope
// is scope, with its subscription id in _meta; it reports whether there was
// one. A stream too slow to take it loses it.
func (ls *listenerSet) notifyScope(scope, method string, params json.RawMessage) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for l := range ls.set {
		if l.scope != scope || scope == "" {
			continue
		}
		select {
		case l.updates <- appendNotification(nil, method, withSubscriptionID(params, l.id)):
		default:
		}
		return true
	}
	return false
}

// withSubscriptionID adds the subscription id to params' _meta.
func withSubscriptionID(params json.RawMessage, id json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		p = make(map[string]json.RawMessage, 1)
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil || meta == nil {
		meta = make(map[string]json.RawMessage, 1)
	}
	meta[metaSubscriptionID] = id
	p["_meta"], _ = json.Marshal(meta) // a map of valid raw JSON always encodes
	b, _ := json.Marshal(p)
	return b
}

// noClient is the ClientRequester of requests made for a listen stream,
// which has no client to ask.
type noClient struct{}

// ClientCapabilities declares nothing.
func (noClient) ClientCapabilities() json.RawMessage { return json.RawMessage("{}") }

// RequestClient always fails: nobody can answer.
func (noClient) RequestClient(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "a subscriptions/listen stream cannot answer server→client requests")
}
