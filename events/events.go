// Package events carries the gateway's events against the order its parts
// are built in, so that every part is complete when its constructor returns
// and no two parts hold each other: the transport says a session closed and
// the upstream relay releases what it held; the registry says it loaded
// skills or that tool lists changed, and the relay matches its connections
// and the transport tells the sessions; the relay says it stored tools or
// has a notification for a session, and the registry reloads or the
// transport sends it.
//
// A Hub passes each event to its subscribers in the order they subscribed,
// on the publisher's goroutine. It imports only the standard library and
// the root package; it must not import any other package of the gateway.
package events

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate"
)

// Hub fans each event out to its subscribers. The zero value has none; it
// is safe for concurrent use.
type Hub struct {
	sessionClosed topic[func(sessionID string)]
	skillsLoaded  topic[func(skills []*mcpgate.Skill)]
	toolsChanged  topic[func(agentIDs []string)]
	skillsStored  topic[func(ctx context.Context)]
	notifiers     topic[mcpgate.SessionNotifier]
	requested     topic[func(a *mcpgate.Approval)]
	decided       topic[func(a *mcpgate.Approval)]
	published     topic[publisher]
}

var _ mcpgate.SessionNotifier = (*Hub)(nil)

// New returns a Hub with no subscribers.
func New() *Hub { return &Hub{} }

// SessionClosed publishes that this replica stopped serving a session.
func (h *Hub) SessionClosed(sessionID string) {
	h.sessionClosed.each(func(f func(string)) { f(sessionID) })
}

// OnSessionClosed subscribes f to SessionClosed.
func (h *Hub) OnSessionClosed(f func(sessionID string)) { h.sessionClosed.add(f) }

// SkillsLoaded publishes every skill the registry loaded.
func (h *Hub) SkillsLoaded(skills []*mcpgate.Skill) {
	h.skillsLoaded.each(func(f func([]*mcpgate.Skill)) { f(skills) })
}

// OnSkillsLoaded subscribes f to SkillsLoaded.
func (h *Hub) OnSkillsLoaded(f func(skills []*mcpgate.Skill)) { h.skillsLoaded.add(f) }

// ToolsChanged publishes the agents whose tool lists changed.
func (h *Hub) ToolsChanged(agentIDs []string) {
	h.toolsChanged.each(func(f func([]string)) { f(agentIDs) })
}

// OnToolsChanged subscribes f to ToolsChanged.
func (h *Hub) OnToolsChanged(f func(agentIDs []string)) { h.toolsChanged.add(f) }

// SkillsStored publishes that skills were written to the store outside
// the registry (tools an upstream server listed).
func (h *Hub) SkillsStored(ctx context.Context) {
	h.skillsStored.each(func(f func(context.Context)) { f(ctx) })
}

// OnSkillsStored subscribes f to SkillsStored.
func (h *Hub) OnSkillsStored(f func(ctx context.Context)) { h.skillsStored.add(f) }

// NotifySession passes a notification for one session to the notifiers.
func (h *Hub) NotifySession(sessionID, method string, params json.RawMessage) {
	h.notifiers.each(func(n mcpgate.SessionNotifier) { n.NotifySession(sessionID, method, params) })
}

// NotifyAgent passes a notification for every session of an agent to the
// notifiers.
func (h *Hub) NotifyAgent(agentID, method string, params json.RawMessage) {
	h.notifiers.each(func(n mcpgate.SessionNotifier) { n.NotifyAgent(agentID, method, params) })
}

// OnNotify subscribes n to NotifySession and NotifyAgent.
func (h *Hub) OnNotify(n mcpgate.SessionNotifier) { h.notifiers.add(n) }

// Publish publishes an event for webhooks (call, approval and task
// events). Subscribers must not block: they queue the event and return.
func (h *Hub) Publish(ctx context.Context, e *mcpgate.Event) {
	h.published.each(func(p publisher) { p.f(ctx, e) })
}

// OnPublish subscribes f to Publish; it wants every event (Wants).
func (h *Hub) OnPublish(f func(ctx context.Context, e *mcpgate.Event)) {
	h.published.add(publisher{f: f})
}

// OnPublishWanted subscribes f to Publish, wanting the events wants
// reports it wants (f is still given every event, and may drop some).
func (h *Hub) OnPublishWanted(f func(ctx context.Context, e *mcpgate.Event), wants func(userID, eventType string) bool) {
	h.published.add(publisher{f: f, wants: wants})
}

// Wants reports whether a subscriber wants an event of eventType for the
// user; a publisher may skip making an event that none wants, such as a
// call's on every call when no webhook listens.
func (h *Hub) Wants(userID, eventType string) bool {
	for _, p := range h.published.list() {
		if p.wants == nil || p.wants(userID, eventType) {
			return true
		}
	}
	return false
}

// publisher is a subscriber of Publish, and what it wants (every event
// when nil).
type publisher struct {
	f     func(ctx context.Context, e *mcpgate.Event)
	wants func(userID, eventType string) bool
}

// topic is one event's subscribers.
type topic[F any] struct {
	mu   sync.RWMutex
	subs []F
}

// add appends a subscriber.
func (t *topic[F]) add(f F) {
	t.mu.Lock()
	t.subs = append(t.subs, f)
	t.mu.Unlock()
}

// each calls do with every subscriber, outside the lock, so that a
// subscriber may publish or subscribe in turn.
func (t *topic[F]) each(do func(F)) {
	for _, f := range t.list() {
		do(f)
	}
}

// list returns the subscribers (append never changes the ones listed).
func (t *topic[F]) list() []F {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.subs
}

// ApprovalRequested publishes that a gated call asked for approval (the
// event approval.requested, for webhooks and live lists).
func (h *Hub) ApprovalRequested(a *mcpgate.Approval) {
	h.requested.each(func(f func(*mcpgate.Approval)) { f(a) })
}

// OnApprovalRequested subscribes f to ApprovalRequested.
func (h *Hub) OnApprovalRequested(f func(a *mcpgate.Approval)) { h.requested.add(f) }

// ApprovalDecided publishes that an approval was decided: approved,
// rejected, expired or withdrawn (the event approval.decided).
func (h *Hub) ApprovalDecided(a *mcpgate.Approval) {
	h.decided.each(func(f func(*mcpgate.Approval)) { f(a) })
}

// OnApprovalDecided subscribes f to ApprovalDecided.
func (h *Hub) OnApprovalDecided(f func(a *mcpgate.Approval)) { h.decided.add(f) }
