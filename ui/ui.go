// Package ui is the gateway's dashboard at /ui/: server-rendered pages
// (html/template, embedded with go:embed, one Go file and one template per
// page) for agents, keys, OAuth grants, users, the calls log and the
// approvals queue. Every action is a plain form POST carrying a CSRF token,
// so the dashboard works with JavaScript off; the two small scripts only
// add copy buttons and keep the approvals queue live (an SSE stream of
// the approval events of this replica and, through the bus, of the
// others; a poll as a fallback). Pages
// are served with a strict Content-Security-Policy (default-src 'self', no
// inline script or style).
//
// Sign-in is the OAuth server's (auth/oauth): the same login page, session
// cookie and CSRF cookie, reached through the narrow Sessions interface.
// A user sees and changes their own agents and keys; admins see all, as in
// the management API. Handlers take the narrow store interfaces of
// store.go, not mcpgate.Store; the calls log, the approval decider and
// the approval events come through interfaces that may be nil (CallLog,
// ApprovalDecider, ApprovalEvents).
//
// It imports the root package, auth (new keys, password hashes), config
// (the user name rule) and registry (an agent's tool table); it must not
// import a store implementation, a backend, the pipeline, the server, the
// management API or auth/oauth itself.
package ui

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html static/*
var files embed.FS

// Options configure a Handler. Store, Sessions and PublicURL are required.
type Options struct {
	// Store is read and written by the pages.
	Store Store
	// Sessions is the shared sign-in: the OAuth server's session and CSRF
	// cookies.
	Sessions Sessions
	// LoginURL returns the login page's path that returns to a path once
	// signed in (oauth.LoginURL).
	LoginURL func(returnPath string) string
	// PublicURL is the gateway's base URL, shown in agents' MCP URLs.
	PublicURL string
	// Tables finds an agent's tool table, for its tool list; optional.
	Tables Tables
	// Calls reads the audit log; optional: without it the calls pages say
	// the audit log is off.
	Calls CallLog
	// Approvals decides approvals; optional: without it the gateway has
	// no approval gate and the queue says so.
	Approvals ApprovalDecider
	// Events tells of approvals asked for and decided in this process, for
	// the live queue; optional: without it the queue's script polls.
	Events ApprovalEvents
	// Signals, with Events, carries the approval events between replicas
	// (see ApprovalsTopic); optional: without it a queue hears of other
	// replicas' approvals at its page's next poll.
	Signals Signals
	// Changed is called after an agent changed, so that the registry
	// reloads at once; optional.
	Changed func(ctx context.Context) error
	// Forget drops a revoked key from the authenticator's cache; optional.
	Forget func(hash string)
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger is optional; nil discards.
	Logger *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	opts  Options
	pages *template.Template
	mux   *http.ServeMux
	live  *live
	// pending and ctx follow the other replicas' approvals (replicas.go);
	// stop ends that, and following is the goroutine that does it, which
	// Close waits for.
	pending   pendingSet
	ctx       context.Context
	stop      context.CancelFunc
	following sync.WaitGroup
}

// New returns the dashboard.
func New(opts *Options) *Handler {
	h := &Handler{opts: *opts, mux: http.NewServeMux(), live: newLive(), pending: pendingSet{ids: map[string]bool{}}}
	h.ctx, h.stop = context.WithCancel(context.Background())
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if h.opts.Now == nil {
		h.opts.Now = time.Now
	}
	h.opts.PublicURL = strings.TrimRight(h.opts.PublicURL, "/")
	h.pages = template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))
	h.routes()
	if h.opts.Events != nil {
		h.opts.Events.OnApprovalRequested(h.local)
		h.opts.Events.OnApprovalDecided(h.local)
	}
	if h.opts.Events != nil && h.opts.Signals != nil {
		wake := h.opts.Signals.Watch(h.ctx, ApprovalsTopic)
		h.following.Go(func() { h.followReplicas(wake) })
	}
	return h
}

// Close ends the open approval streams and refuses new ones, so that a
// shutdown does not wait for them; the pages go on working (their script
// polls). It returns once the following of the other replicas' approvals
// has ended, so that none of its reads of the store outlives it: the
// gateway closes the store after it, and a read still running then could
// make SQLite's files anew in a data dir being removed.
func (h *Handler) Close() {
	h.stop()
	h.live.close()
	h.following.Wait()
}

// Paths returns the patterns the dashboard must be mounted under. They
// are literal path prefixes rather than "/ui/", which would overlap an
// agent's MCP endpoint pattern "/{agent}/mcp" at /ui/mcp.
func (h *Handler) Paths() []string {
	return []string{"/ui/{$}", "/ui/static/", "/ui/agents/", "/ui/keys/", "/ui/oauth/", "/ui/users/", "/ui/calls/", "/ui/approvals/", "/ui/logout/"}
}

// routes is the dashboard's route table.
func (h *Handler) routes() {
	h.mux.Handle("GET /ui/static/{file}", http.StripPrefix("/ui/", http.FileServerFS(files))) // files, no listing
	h.mux.Handle("GET /ui/{$}", h.page(h.overview))
	h.mux.Handle("GET /ui/agents/{$}", h.page(h.agentList))
	h.mux.Handle("GET /ui/agents/{id}/{$}", h.page(h.agentDetail))
	h.mux.Handle("POST /ui/agents/{id}/mcp", h.form(h.agentMCP))
	h.mux.Handle("GET /ui/keys/{$}", h.page(h.keyList))
	h.mux.Handle("POST /ui/keys/{$}", h.form(h.keyCreate))
	h.mux.Handle("POST /ui/keys/{id}/revoke", h.form(h.keyRevoke))
	h.mux.Handle("GET /ui/oauth/{$}", h.page(h.grantList))
	h.mux.Handle("POST /ui/oauth/grants/{id}/revoke", h.form(h.grantRevoke))
	h.mux.Handle("POST /ui/oauth/clients/{id}/delete", h.form(h.admin(h.clientDelete)))
	h.mux.Handle("GET /ui/users/{$}", h.page(h.admin(h.userList)))
	h.mux.Handle("POST /ui/users/{$}", h.form(h.admin(h.userCreate)))
	h.mux.Handle("POST /ui/users/{id}/admin", h.form(h.admin(h.userAdmin)))
	h.mux.Handle("GET /ui/calls/{$}", h.page(h.callList))
	h.mux.Handle("GET /ui/calls/{id}", h.page(h.callDetail))
	h.mux.Handle("GET /ui/approvals/{$}", h.page(h.approvalList))
	h.mux.HandleFunc("GET /ui/approvals/events", h.approvalEvents)
	h.mux.Handle("POST /ui/approvals/{id}/approve", h.form(h.approvalApprove))
	h.mux.Handle("POST /ui/approvals/{id}/reject", h.form(h.approvalReject))
	h.mux.Handle("POST /ui/logout/{$}", h.form(h.logout))
}

// ServeHTTP serves a dashboard request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

// csp is the Content-Security-Policy of every dashboard response: only the
// dashboard's own stylesheet, script and forms.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// setHeaders sets the headers every dashboard response carries.
func setHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
}
