package server

// handsAIRoutes registers the HandsAI-compatible tool surface.
func (s *Server) handsAIRoutes() {}
