// Package api is the gateway's management API (/api/v1): agents, skills,
// tools, keys and users, the agent workers' inbox and channels, and the
// OpenAPI document that describes every route (openapi.json, held against
// the route table by a test). The server mounts it behind its Host/Origin
// guard; the API authenticates each request itself, since it answers a
// refusal in its own error body.
//
// Handlers take the narrow store interfaces of store.go, not
// mcpgate.Store; a skill changes only through a SkillEditor (skilledit),
// which checks it the way the config file does. API errors become HTTP in
// one place, writeAPIError. It imports the root package, config, skilledit
// and rest/openapi (to check skills and import OpenAPI documents, so that
// the file, the CLI and the API create tools one way), auth (new keys and
// password hashes) and mcp's status mapping; it must not import a store implementation, a backend, the
// pipeline, the registry, the server or the HandsAI surface.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"
)

// Options configure a Server. Store, Skills and Auth are required.
type Options struct {
	// Store is read and written by the handlers.
	Store Store
	// Skills changes skills, checking them first.
	Skills SkillEditor
	// Auth authenticates every request but the OpenAPI document's.
	Auth Authenticator
	// Changed is called after an agent, a skill or a tool changed, so that
	// the registry reloads and open sessions hear of it at once; optional.
	Changed func(ctx context.Context) error
	// Forget drops a key from the authenticator's cache, so that a key
	// revoked through the API stops working at once; optional.
	Forget func(hash string)
	// Bus posts agent workers' messages and wakes their inbox streams;
	// optional: without it the agent worker routes answer 503.
	Bus MessageBus
	// Agents finds agents as the registry holds them in memory, so that a
	// worker's request need not read its agent from the store; optional:
	// without it every worker request reads it.
	Agents Agents
	// Visibility is how long a message delivered to an agent worker waits
	// for its acknowledgement before it is delivered again; default
	// DefaultVisibility.
	Visibility time.Duration
	// InboxPing is how often a quiet inbox stream gets a keep-alive
	// comment; default DefaultInboxPing.
	InboxPing time.Duration
	// Approvals decides approvals; optional: without it decisions answer
	// 503.
	Approvals ApprovalDecider
	// Tasks runs tools/calls as background tasks; optional: without it
	// the task routes answer 503.
	Tasks TaskRunner
	// Blobs stores uploaded files' bytes and Signer signs their URLs;
	// optional: without them the file routes answer 503.
	Blobs  Blobs
	Signer URLSigner
	// PublicURL is the gateway's base URL, which presigned URLs start with.
	PublicURL string
	// MaxUploadBytes caps one upload; default DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// Webhooks manages webhooks; optional: without it the webhook routes
	// answer 503.
	Webhooks Webhooks
	// Logger is optional; nil discards.
	Logger *slog.Logger
}

// Server serves the management API under /api/v1.
type Server struct {
	opts Options
	mux  *http.ServeMux
}

// New returns the management API.
func New(opts *Options) *Server {
	s := &Server{opts: *opts, mux: http.NewServeMux()}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	s.apiRoutes()
	return s
}

// ServeHTTP serves a request under /api/v1.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// writeJSON writes v with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
