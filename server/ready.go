package server

import (
	"context"
	"net/http"
	"time"
)

// Readiness says whether this replica should be sent traffic: it is not
// draining (shutting down) and its agents' tables have loaded.
type Readiness interface {
	// Draining reports whether the replica is shutting down.
	Draining() bool
	// Loaded reports whether the agents' tables have loaded once.
	Loaded() bool
}

// drainRetryAfter is the Retry-After, in seconds, of a stream refused
// while draining: the client comes back at once, through the load
// balancer, to another replica.
const drainRetryAfter = "1"

// draining reports whether the replica is shutting down.
func (s *Server) draining() bool {
	return s.opts.Readiness != nil && s.opts.Readiness.Draining()
}

// handleReady answers /readyz: 200 only when the database answers, the
// tables have loaded and the replica is not draining; 503 otherwise, with
// the reason.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.draining() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	if s.opts.Readiness != nil && !s.opts.Readiness.Loaded() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Store.Ping(ctx); err != nil {
		s.opts.Logger.Error("readiness check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// refuseStreamsWhileDraining refuses a GET (a new SSE stream) on the MCP
// endpoint while the replica drains, with 503 and Retry-After, so that the
// client reconnects through the load balancer to another replica; POSTs
// are still served, so that calls in flight get their answers.
func (s *Server) refuseStreamsWhileDraining(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && s.draining() {
			w.Header().Set("Retry-After", drainRetryAfter)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "this replica is shutting down: reconnect"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// probes registers /healthz and /readyz outside the Host/Origin guard: an
// orchestrator's probes and a load balancer's health checks reach a
// replica by its own address, not the public host name, and the answers
// (a status and the version) are no secret.
func (s *Server) probes() {
	s.mux.Handle("GET /healthz", s.measure("healthz", http.HandlerFunc(s.handleHealth)))
	s.mux.Handle("GET /readyz", s.measure("readyz", http.HandlerFunc(s.handleReady)))
}
