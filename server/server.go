// Package server is the gateway's HTTP front: the route table, the
// Origin/Host guard, metrics of every request, authentication and
// authorization in front of the MCP endpoint (/{agent}/mcp) and the
// HandsAI-compatible surface, the OAuth server's routes, /healthz
// (liveness), /readyz (readiness) and /metrics. The management API
// (package api), the HandsAI surface (package handsai) and the dashboard
// (package ui) are mounted behind the same guard.
//
// MCP errors and authentication refusals go through the mcp package's
// error writer, with an OAuth challenge. It imports the root package, mcp,
// registry (the agents' tables) and auth (a header name); it must not
// import a store implementation, a backend, the pipeline, config, the
// management API or the HandsAI surface.
package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// Authenticator turns a request's headers into a credential.
type Authenticator interface {
	Authenticate(r *http.Request) (*mcpgate.Credential, error)
}

// MCPServer serves the MCP protocol for one agent.
type MCPServer interface {
	ServeAgent(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential)
}

// Tables finds an agent's tool table.
type Tables interface {
	Table(agentID string) (*registry.Table, bool)
}

// HandsAI serves the HandsAI-compatible tool surface (package handsai) to
// authenticated callers.
type HandsAI interface {
	// ServeList answers POST /mcp/tools/list.
	ServeList(w http.ResponseWriter, r *http.Request, cred *mcpgate.Credential)
	// ServeCall answers POST /mcp/tools/call.
	ServeCall(w http.ResponseWriter, r *http.Request, cred *mcpgate.Credential)
}

// Metrics records requests and serves the metrics page.
type Metrics interface {
	ObserveRequest(route string, code int, d time.Duration)
	Handler() http.Handler
}

// UI is the dashboard (package ui): a handler and the path patterns it is
// mounted under.
type UI interface {
	http.Handler
	// Paths returns the ServeMux patterns to mount it under.
	Paths() []string
}

// Store is what the server reads itself: whether the database answers
// (/healthz), and users (an administrator's access to /metrics).
type Store interface {
	Ping(ctx context.Context) error
	FindUserByID(ctx context.Context, id string) (*mcpgate.User, error)
}

// Options configure a Server. Every field is required except those said
// to be optional.
type Options struct {
	// Store is checked by /healthz.
	Store Store
	// Tables finds the agent of /{agent}/mcp.
	Tables Tables
	// Auth authenticates requests to the MCP endpoint and the HandsAI
	// surface.
	Auth Authenticator
	// MCP serves the protocol once a request is authorized.
	MCP MCPServer
	// Metrics records every request and serves /metrics.
	Metrics Metrics
	// MetricsAccess says who may read /metrics here; the zero value lets
	// administrators only.
	MetricsAccess MetricsAccess
	// PublicURL is the gateway's base URL as clients reach it, used for
	// every absolute URL and allowed as Host and Origin.
	PublicURL string
	// AllowedHosts and AllowedOrigins extend the Host/Origin guard.
	AllowedHosts   []string
	AllowedOrigins []string
	// Mounts are extra handlers by path prefix (such as the demo API),
	// behind the same Host/Origin guard; optional.
	Mounts map[string]http.Handler
	// API serves the management API under /api/v1/, measured under the
	// route label "api"; optional.
	API http.Handler
	// HandsAI serves /mcp/tools/list and /mcp/tools/call once a request
	// is authenticated; optional.
	HandsAI HandsAI
	// UI is the dashboard, served under /ui/ behind the same guard and
	// measured under the route label "ui"; optional.
	UI UI
	// OAuth is the OAuth authorization server whose metadata and endpoints
	// are served; optional.
	OAuth OAuthServer
	// Readiness says whether the replica is draining and loaded, for
	// /readyz and /healthz; optional (always ready).
	Readiness Readiness
	// Logger is optional; nil discards.
	Logger *slog.Logger
}

// Server routes the gateway's HTTP requests.
type Server struct {
	opts  Options
	guard *guard
	mux   *routeMux
}

// New returns a server. Returns EINVALID when the public URL or an allowed
// origin is malformed.
func New(opts *Options) (*Server, error) {
	s := &Server{opts: *opts, mux: newRouteMux()}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	g, err := newGuard(s.opts.PublicURL, s.opts.AllowedHosts, s.opts.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	s.guard = g
	s.routes()
	return s, nil
}

// routes is the route table.
func (s *Server) routes() {
	s.probes()
	s.metricsRoute()
	s.handle(mcpPattern, "mcp", s.refuseStreamsWhileDraining(http.HandlerFunc(s.handleMCP)))
	s.oauthRoutes()
	if s.opts.API != nil {
		s.handle("/api/v1/", "api", s.opts.API)
	}
	if s.opts.HandsAI != nil {
		s.handle("POST /mcp/tools/list", "handsai_list", s.authenticated(s.opts.HandsAI.ServeList))
		s.handle("POST /mcp/tools/call", "handsai_call", s.authenticated(s.opts.HandsAI.ServeCall))
	}
	if s.opts.UI != nil {
		for _, pattern := range s.opts.UI.Paths() {
			s.handle(pattern, "ui", s.opts.UI)
		}
	}
	for prefix, h := range s.opts.Mounts {
		s.handle(prefix, prefix, h)
	}
	s.handle("/", "not_found", http.HandlerFunc(handleNotFound))
}

// handle registers a handler behind the Host/Origin guard, measured under
// a route label.
func (s *Server) handle(pattern, route string, h http.Handler) {
	s.mux.Handle(pattern, s.measure(route, s.guard.wrap(h)))
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// handleHealth answers 200 when the database answers (liveness), and 503
// {"status":"draining"} while the replica shuts down.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.draining() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Store.Ping(ctx); err != nil {
		s.opts.Logger.Error("health check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": mcpgate.Version})
}

// handleNotFound answers unknown paths.
func handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]string{
		"error": "not found: MCP endpoints are served at /{agentId}/mcp",
	})
}

// writeJSON writes v with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
