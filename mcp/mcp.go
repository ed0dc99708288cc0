// Package mcp is the gateway's MCP server side: the Streamable HTTP
// transport behind POST|GET|DELETE /{agentId}/mcp. It negotiates protocol
// versions, frames JSON-RPC, keeps sessions (stored through
// mcpgate.SessionStore so any replica serves them, cached in memory), answers
// in JSON or switches a reply to SSE when a call sends notifications, and
// keeps recent SSE events so a client can resume a stream. Calls and
// relayed requests (resources, prompts, completions, for agents whose
// Gateway is a Relayer) may send the client server→client requests
// (sampling, elicitation, roots) and get its answers; NotifySession and
// NotifyAgent reach sessions outside any call.
//
// Authentication, authorization and Origin/Host checks happen before
// ServeAgent is called (package server). Tools are resolved and run by a
// Gateway. This package imports only the standard library, the root
// package mcpgate and internal/lazyctx; it must not import server,
// pipeline, stores or backends.
package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultPageSize     = 1000
	DefaultKeepAlive    = 25 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultServerName   = "mcpgate"

	DefaultMaxSessionsPerIdentity = 256
)

// Options configures a Server. Sessions and Gateway are required.
type Options struct {
	// Sessions stores sessions so that any replica can serve them.
	Sessions mcpgate.SessionStore
	// Gateway lists and runs the agents' tools.
	Gateway Gateway
	// ServerName and ServerVersion go into initialize's serverInfo
	// (defaults: "mcpgate" and mcpgate.Version).
	ServerName, ServerVersion string
	// MaxBodyBytes limits a POST body; larger ones get 413 (default 4 MiB).
	MaxBodyBytes int64
	// PageSize is the number of tools per tools/list page (default 1000,
	// as the Go SDK's servers list; the TypeScript SDK's list every tool in
	// one page). An agent's whole list then comes in one request, where
	// pages of 100 made a host listing 1,000 tools pay a request's cost ten
	// times; a client still follows nextCursor past it. tasks/list pages
	// hold at most taskPageSize tasks.
	PageSize int
	// KeepAlive is the interval of SSE comment pings on quiet streams
	// (default 25s).
	KeepAlive time.Duration
	// WriteTimeout bounds each write of an SSE event or comment; a client
	// that reads slower than that loses the connection and may resume the
	// stream (default 10s).
	WriteTimeout time.Duration
	// MaxSessionsPerIdentity is the number of sessions of one identity
	// this replica keeps in memory (default 256). Beyond it, the identity's
	// least recently used idle session leaves the cache; it stays stored
	// and is loaded again when used.
	MaxSessionsPerIdentity int
	// SessionClosed, when set, is called with the id of each session this
	// replica stops serving: ended by DELETE, found ended (by another
	// replica) or unknown when revalidated, or evicted from the cache
	// (idle, or beyond MaxSessionsPerIdentity; such a session may come back
	// when used again). It runs on a goroutine of its own, at most once per
	// time the session was loaded here, so that what a backend keeps for
	// the session (upstream sessions) is released. Server.Close does not
	// call it.
	SessionClosed func(sessionID string)
	// Logger receives internal errors (default slog.Default()).
	Logger *slog.Logger
	// AccessLog, when set, receives one line per request (see logAccess);
	// SlowCall is the duration beyond which that line is a warning
	// (default DefaultSlowCall).
	AccessLog *slog.Logger
	SlowCall  time.Duration
	// Tracer traces requests (default mcpgate.NopTracer).
	Tracer mcpgate.Tracer
	// Tasks, when set, serves the tasks utility to 2025-11-25 sessions:
	// task-augmented tools/call, tasks/get, tasks/result, tasks/list and
	// tasks/cancel, and every tool listed with execution.taskSupport
	// "optional".
	Tasks Tasks
	// RequestState, when set, signs the requestState of 2026-07-28 multi
	// round-trip results (see mrtr.go): a 2026-07-28 caller that declares
	// elicitation, sampling or roots then gets an InputRequiredResult where
	// an older caller gets a server→client request. Without it such a
	// caller gets no server→client request at all.
	RequestState StateSigner
	// InputWait is how long a call waits for the client's retry with
	// inputResponses before it is cancelled (default DefaultInputWait); the
	// requestState expires with it.
	InputWait time.Duration
	// Now returns the current time (default time.Now); tests set it.
	Now func() time.Time
	// Peers, when set, carries to the replica holding them what a request
	// on this one concerns: answers to server→client requests,
	// cancellations, notifications for sessions whose GET stream is
	// elsewhere, and resumptions of streams (see Peers). Its Instance
	// prefixes this Server's stream and request ids.
	Peers Peers
	// EventLog, when set with Peers, keeps the streams' events in the
	// database behind the sends, for resumptions on another replica after
	// this one died (see EventLog).
	EventLog EventLog
}

// Gateway is what the transport needs from the rest of the gateway. A
// Gateway that also implements Relayer serves resources, prompts and
// completions too.
type Gateway interface {
	// ListTools returns the agent's tools sorted by name, each pre-encoded
	// as its MCP Tool JSON (name, title, description, inputSchema,
	// outputSchema, annotations). The transport keeps the pages it encodes
	// from a listing for as long as ListTools returns the same slice, so a
	// changed list must come as a new slice, and a returned one must never
	// change.
	ListTools(ctx context.Context, agent *mcpgate.Agent) ([]ListedTool, error)
	// CallTool runs one tools/call. call.Agent, ToolName, Arguments,
	// Caller, SessionID and Notifier are set by mcp; the gateway
	// resolves the tool. Errors carry mcpgate codes: ENOTFOUND (unknown
	// tool), EINVALID, ETIMEOUT, EUNAVAILABLE, ERATELIMIT, ECONFLICT,
	// ECANCELED...
	CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)
}

// StreamPausers is a Gateway whose backends may pause a request's SSE
// reply before its result (callReply.PauseStream: a relayed upstream MCP
// server closed its own stream mid-request). A request that may pause runs
// apart from its HTTP exchange, which costs a goroutine, so only the
// requests to the agents MayPause names do. With a Gateway that does not
// implement it, no reply ever pauses.
type StreamPausers interface {
	// MayPause reports whether requests to the agent may pause.
	MayPause(agent *mcpgate.Agent) bool
}

// ListedTool is one tool of tools/list: its name, for ordering and cursors,
// and its MCP Tool JSON, served as is.
type ListedTool struct {
	Name string
	JSON json.RawMessage
}

// Server serves the MCP endpoints of all agents. It is safe for concurrent
// use; Close cancels every call and stream it runs.
type Server struct {
	store          mcpgate.SessionStore
	gateway        Gateway
	relayer        Relayer       // the gateway, if it relays; else nil
	pausers        StreamPausers // the gateway, if replies may pause; else nil
	tasks          Tasks         // nil without the tasks utility
	signer         StateSigner   // nil without multi round-trip requests
	inputWait      time.Duration
	sessionClosed  func(sessionID string)
	name           string
	version        string
	maxBody        int64
	pageSize       int
	keepAlive      time.Duration
	writeTimeout   time.Duration
	maxPerIdentity int
	log            *slog.Logger
	access         *slog.Logger
	slowCall       time.Duration
	tracer         mcpgate.Tracer
	traced         bool // tracer is not a NopTracer
	now            func() time.Time

	// instance prefixes stream ids so they are unique across replicas.
	instance  string
	streamSeq atomic.Uint64
	// requestSeq numbers server→client requests.
	requestSeq atomic.Uint64
	// lists keeps the agents' encoded tools/list pages.
	lists listCache
	// bufs holds large response buffers for reuse (responseBuf).
	bufs sync.Pool
	// listeners are the open subscriptions/listen streams (2026-07-28).
	listeners listenerSet
	// peers reach the other replicas (nil: none), and remotes are the
	// resumptions served across replicas.
	peers   Peers
	remotes remoteSet
	// eventLog keeps the streams' events beyond this replica (nil: none);
	// eventPos numbers the events it is given.
	eventLog EventLog
	eventPos atomic.Int64
	// sse counts the SSE responses being written.
	sse  atomic.Int64
	base context.Context
	stop context.CancelFunc

	mu         sync.RWMutex
	live       map[string]*liveSession            // by session id
	byIdentity map[string]map[string]*liveSession // the same, by identity and id
	sweptAt    time.Time

	heldMu sync.Mutex
	held   map[string]*heldCall // 2026-07-28 calls waiting for a retry, by id

	// taken counts the pumps of the GET streams that took their
	// connections over (takeOverStream); takenMu orders their start
	// before Close's wait.
	takenMu sync.Mutex
	taken   sync.WaitGroup
}

// New returns a Server. It panics if opts lacks Sessions or Gateway, which
// is a wiring mistake.
func New(opts *Options) *Server {
	if opts == nil || opts.Sessions == nil || opts.Gateway == nil {
		panic("mcp.New: Options.Sessions and Options.Gateway are required")
	}
	base, stop := context.WithCancel(context.Background())
	s := &Server{
		store: opts.Sessions, gateway: opts.Gateway,
		name: opts.ServerName, version: opts.ServerVersion,
		maxBody: opts.MaxBodyBytes, pageSize: opts.PageSize, keepAlive: opts.KeepAlive,
		writeTimeout: opts.WriteTimeout, maxPerIdentity: opts.MaxSessionsPerIdentity,
		log: opts.Logger, now: opts.Now, sessionClosed: opts.SessionClosed,
		access: opts.AccessLog, slowCall: opts.SlowCall, tracer: opts.Tracer, tasks: opts.Tasks,
		signer: opts.RequestState, inputWait: opts.InputWait,
		instance: randomHex(6), base: base, stop: stop,
		live: make(map[string]*liveSession), byIdentity: make(map[string]map[string]*liveSession),
	}
	s.relayer, _ = opts.Gateway.(Relayer)
	s.pausers, _ = opts.Gateway.(StreamPausers)
	s.setDefaults()
	if opts.Peers != nil {
		s.peers, s.instance, s.eventLog = opts.Peers, opts.Peers.Instance(), opts.EventLog
		go s.receivePeers(opts.Peers.Messages())
	}
	return s
}

func (s *Server) setDefaults() {
	if s.name == "" {
		s.name = DefaultServerName
	}
	if s.version == "" {
		s.version = mcpgate.Version
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.pageSize <= 0 {
		s.pageSize = DefaultPageSize
	}
	if s.keepAlive <= 0 {
		s.keepAlive = DefaultKeepAlive
	}
	if s.writeTimeout <= 0 {
		s.writeTimeout = DefaultWriteTimeout
	}
	if s.maxPerIdentity <= 0 {
		s.maxPerIdentity = DefaultMaxSessionsPerIdentity
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.inputWait <= 0 {
		s.inputWait = DefaultInputWait
	}
	if s.slowCall <= 0 {
		s.slowCall = DefaultSlowCall
	}
	if s.tracer == nil {
		s.tracer = mcpgate.NopTracer{}
	}
	_, nop := s.tracer.(mcpgate.NopTracer)
	s.traced = !nop
}

// Close cancels every call in flight and ends every open stream, waiting
// for the GET streams that took their connections over to end their
// bodies (each within the write timeout). Sessions stay stored, so clients
// continue on another replica.
func (s *Server) Close() {
	s.takenMu.Lock()
	s.stop() // under takenMu: no such stream's pump starts after it (goTakenOver)
	s.takenMu.Unlock()
	s.taken.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.live)
	clear(s.byIdentity)
}

// ServeAgent serves POST, GET and DELETE on an agent's MCP endpoint for a
// request already authenticated as cred and authorized for agent. Other
// methods get 405 with an Allow header.
func (s *Server) ServeAgent(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential) {
	switch r.Method {
	case http.MethodPost:
		s.servePost(w, r, agent, cred)
	case http.MethodGet:
		s.serveGet(w, r, agent, cred)
	case http.MethodDelete:
		s.serveDelete(w, r, agent, cred)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeStatus(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST, GET or DELETE on an MCP endpoint")
	}
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// OpenSessions returns how many sessions this replica holds in memory.
func (s *Server) OpenSessions() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.live)
}

// OpenStreams returns how many SSE responses this replica is writing.
func (s *Server) OpenStreams() int { return int(s.sse.Load()) }
