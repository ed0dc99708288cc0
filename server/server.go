// Package server is the gateway's HTTP surface: the route table, the
// Origin/Host guard, authentication and authorization in front of the MCP
// endpoint, the management API (/api/v1), the HandsAI-compatible tool
// surface (/mcp/tools/list and /mcp/tools/call), /healthz and /metrics.
//
// MCP errors go through the mcp package's error writer and API errors
// through writeAPIError. Tool calls run in the pipeline; the management API
// checks skills with the config file's own checks (package config) and
// imports OpenAPI documents with rest/openapi, so that the file, the CLI
// and the API create tools one way. It must not import a store
// implementation or a backend other than rest/openapi.
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

// Tables finds an agent's tool table, or lists every agent's.
type Tables interface {
	Table(agentID string) (*registry.Table, bool)
	// Tables returns every agent's table, sorted by agent ID.
	Tables() []*registry.Table
}

// Metrics records requests and serves the metrics page.
type Metrics interface {
	ObserveRequest(route string, code int, d time.Duration)
	Handler() http.Handler
}

// Options configure a Server. Every field is required except those said
// to be optional.
type Options struct {
	// Store is checked by /healthz and read and written by the management
	// API.
	Store mcpgate.Store
	// Tables finds the agent of /{agent}/mcp.
	Tables Tables
	// Auth authenticates requests to the MCP endpoint.
	Auth Authenticator
	// MCP serves the protocol once a request is authorized.
	MCP MCPServer
	// Metrics records every request and serves /metrics.
	Metrics Metrics
	// MetricsAccess says who may read /metrics here; the zero value lets
	// administrators only.
	MetricsAccess MetricsAccess
	// Caller runs the tool calls of the HandsAI-compatible surface.
	Caller Caller
	// Changed is called after the management API changed an agent, a skill
	// or a tool, so that the registry reloads and open sessions hear of it
	// at once; optional.
	Changed func(ctx context.Context) error
	// Forget drops a key from the authenticator's cache, so that a key
	// revoked through the API stops working at once; optional.
	Forget func(hash string)
	// PublicURL is the gateway's base URL as clients reach it, used for
	// every absolute URL and allowed as Host and Origin.
	PublicURL string
	// AllowedHosts and AllowedOrigins extend the Host/Origin guard.
	AllowedHosts   []string
	AllowedOrigins []string
	// Mounts are extra handlers by path prefix (such as the demo API),
	// behind the same Host/Origin guard; optional.
	Mounts map[string]http.Handler
	// Bus posts agent workers' messages and wakes their inbox streams;
	// optional: without it the agent worker routes answer 503.
	Bus MessageBus
	// Visibility is how long a message delivered to an agent worker waits
	// for its acknowledgement before it is delivered again; default
	// DefaultVisibility.
	Visibility time.Duration
	// InboxPing is how often a quiet inbox stream gets a keep-alive
	// comment; default DefaultInboxPing.
	InboxPing time.Duration
	// OAuth is the OAuth authorization server whose metadata and endpoints
	// are served; optional.
	OAuth OAuthServer
	// Logger is optional; nil discards.
	Logger *slog.Logger
}

// Server routes the gateway's HTTP requests.
type Server struct {
	opts  Options
	guard *guard
	mux   *http.ServeMux
}

// New returns a server. Returns EINVALID when the public URL or an allowed
// origin is malformed.
func New(opts *Options) (*Server, error) {
	s := &Server{opts: *opts, mux: http.NewServeMux()}
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
	s.handle("GET /healthz", "healthz", http.HandlerFunc(s.handleHealth))
	s.metricsRoute()
	s.handle("/{agent}/mcp", "mcp", http.HandlerFunc(s.handleMCP))
	s.oauthRoutes()
	s.apiRoutes()
	s.handsAIRoutes()
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

// handleHealth answers 200 when the database answers.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
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
