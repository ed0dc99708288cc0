package server

// apiRoutes registers the management API under /api/v1.
func (s *Server) apiRoutes() {}
