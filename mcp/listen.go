package mcp

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// metaSubscriptionID is the _meta key that ties a notification on a
// subscriptions/listen stream to that request (its JSON-RPC id).
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// listFilters maps the list-change notifications a listen stream may ask
// for (basic/patterns/subscriptions, "Notification Filter") to their
// methods. resourceSubscriptions is handled apart (listen_resources.go):
// it is acknowledged with the URIs subscribed, and left out when none.
var listFilters = map[string]string{
	"toolsListChanged":     "notifications/tools/list_changed",
	"promptsListChanged":   "notifications/prompts/list_changed",
	"resourcesListChanged": "notifications/resources/list_changed",
}

// listener is one open subscriptions/listen stream.
type listener struct {
	agentID string
	methods map[string]bool // the notification methods it agreed to
	ch      chan string     // methods to send; one pending of each is enough
	id      json.RawMessage // the listen request's id
	scope   string          // its resource subscriptions' scope; "" for none
	updates chan []byte     // resources/updated notifications to send
}

// listenerSet holds a Server's listen streams. The zero value is ready.
type listenerSet struct {
	mu  sync.Mutex
	set map[*listener]struct{}
}

func (ls *listenerSet) add(l *listener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.set == nil {
		ls.set = make(map[*listener]struct{})
	}
	ls.set[l] = struct{}{}
}

func (ls *listenerSet) remove(l *listener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.set, l)
}

// notify queues method for every listener of the agent that asked for it,
// never waiting: a list change already pending covers a second one.
func (ls *listenerSet) notify(agentID, method string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for l := range ls.set {
		if l.agentID != agentID || !l.methods[method] {
			continue
		}
		select {
		case l.ch <- method:
		default:
		}
	}
}

// listen serves subscriptions/listen: an SSE stream that opens with
// notifications/subscriptions/acknowledged naming the filter members
// agreed to, then carries those list-change notifications of the agent
// and the updates of the resources it subscribed to, each with the request
// id in _meta, and keep-alive comments while quiet.
// The client ends it by closing the stream; when the Server closes, it
// ends with a result (the revision's graceful closure).
func (s *Server) listen(w http.ResponseWriter, ls *liveSession, agent *mcpgate.Agent, cred *mcpgate.Credential, m *message) {
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if err := unmarshalParams(m.Params, &p); err != nil {
		writeJSON(w, http.StatusOK, appendError(nil, m.ID, toRPCError(err)))
		return
	}
	l := &listener{agentID: agent.ID, methods: make(map[string]bool), ch: make(chan string, len(listFilters)), id: m.ID, updates: make(chan []byte, 16)}
	agreed := make(map[string]any)
	for name, method := range listFilters {
		if string(p.Notifications[name]) == "true" {
			l.methods[method], agreed[name] = true, true
		}
	}
	s.listeners.add(l)
	defer s.listeners.remove(l)
	if uris := s.subscribeResources(ls.ctx, agent, cred, l, p.Notifications["resourceSubscriptions"]); uris != nil {
		agreed["resourceSubscriptions"] = uris
	}
	defer s.releaseResources(l)
	startSSE(w)
	ack, _ := json.Marshal(map[string]any{"notifications": agreed, "_meta": map[string]json.RawMessage{metaSubscriptionID: m.ID}})
	s.pumpListen(w, ls, l, m, appendNotification(nil, "notifications/subscriptions/acknowledged", ack))
}

// pumpListen writes the listen stream until the client or the Server ends
// it.
func (s *Server) pumpListen(w http.ResponseWriter, ls *liveSession, l *listener, m *message, first []byte) {
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	tick := time.NewTicker(s.keepAlive)
	defer tick.Stop()
	ok := write(dataEvent(first))
	meta := []byte(`{"_meta":{"` + metaSubscriptionID + `":` + string(m.ID) + `}}`)
	for ok {
		select {
		case <-ls.ctx.Done():
			if s.base.Err() != nil {
				write(dataEvent(appendResult(nil, m.ID, s.modernResult(m.method, meta))))
			}
			return
		case method := <-l.ch:
			ok = write(dataEvent(appendNotification(nil, method, meta)))
		case msg := <-l.updates:
			ok = write(dataEvent(msg))
		case <-tick.C:
			ok = write([]byte(keepAliveEvent))
		}
	}
}

// dataEvent is an SSE event of one line of JSON with no id: the revision's
// streams cannot be resumed.
func dataEvent(msg []byte) []byte {
	b := make([]byte, 0, len(msg)+8)
	b = append(b, "data: "...)
	b = append(b, msg...)
	return append(b, "\n\n"...)
}
