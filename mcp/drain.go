package mcp

import "time"

// PauseStreams ends the connection of every session's GET stream, telling
// the client to reconnect after retry (an SSE retry field) with
// Last-Event-ID, so that it lands on another replica while this one
// drains. The streams' later events wait in the replay. Streams carrying
// a call's reply are left to finish with the call. It returns how many
// connections were ended.
func (s *Server) PauseStreams(retry time.Duration) int {
	s.mu.RLock()
	sessions := make([]*liveSession, 0, len(s.live))
	for _, ls := range s.live {
		sessions = append(sessions, ls)
	}
	s.mu.RUnlock()
	n := 0
	for _, ls := range sessions {
		ls.mu.Lock()
		st := ls.streams.get
		ls.mu.Unlock()
		if st != nil && st.pause(retry) {
			n++
		}
	}
	return n
}
