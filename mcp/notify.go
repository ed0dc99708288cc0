package mcp

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate"
)

// toolsChanged is the notification sent when an agent's tools change.
const toolsChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

var _ mcpgate.SessionNotifier = (*Server)(nil)

// NotifyToolsChanged sends notifications/tools/list_changed to every session
// of the agent served by this replica, on its GET stream (sessions without
// one miss it), and to the agent's subscriptions/listen streams that asked
// for it.
func (s *Server) NotifyToolsChanged(agentID string) {
	s.listeners.notify(agentID, "notifications/tools/list_changed")
	s.notifyAgent(agentID, []byte(toolsChanged))
}

// NotifyAgent sends a notification to every session of the agent served by
// this replica, on its GET stream, with an event id for resumption;
// sessions without one miss it. Nil params are left out.
func (s *Server) NotifyAgent(agentID, method string, params json.RawMessage) {
	if !validNotification(params) {
		s.log.Error("mcp: notification params are not a JSON object", "method", method)
		return
	}
	s.listeners.notify(agentID, method)
	s.notifyAgent(agentID, appendNotification(nil, method, params))
}

// NotifySession sends a notification on the session's GET stream: here,
// when this replica holds it, else, through Peers, on the replica that
// does; or, for the scope of a subscriptions/listen stream's resource
// subscriptions held here, on that stream. A session with no GET stream
// open misses it. Nil params are left out.
func (s *Server) NotifySession(sessionID, method string, params json.RawMessage) {
	if !validNotification(params) {
		s.log.Error("mcp: notification params are not a JSON object", "method", method)
		return
	}
	msg := appendNotification(nil, method, params)
	if ls := s.liveSession(sessionID); ls != nil && ls.emitOnGet(msg) {
		return
	}
	if s.listeners.notifyScope(sessionID, method, params) {
		return
	}
	s.sendPeer("", &peerMessage{Kind: peerNotify, Session: sessionID, Msg: msg})
}

// validNotification reports whether params are absent or a JSON object.
func validNotification(params json.RawMessage) bool {
	return len(params) == 0 || (firstByte(params) == '{' && mcpgate.ValidJSON(params))
}

// notifyAgent sends msg on the GET stream of every session of the agent.
func (s *Server) notifyAgent(agentID string, msg []byte) {
	var streams []*stream
	s.mu.RLock()
	for _, ls := range s.live {
		if ls.agentID != agentID {
			continue
		}
		ls.mu.Lock()
		if g := ls.streams.get; g != nil {
			streams = append(streams, g)
		}
		ls.mu.Unlock()
	}
	s.mu.RUnlock()
	for _, st := range streams {
		st.emit(msg)
	}
}
