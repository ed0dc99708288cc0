package mcp

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// How the in-memory session cache follows the store.
const (
	// revalidateEvery bounds how long a session ended on another replica
	// keeps working here.
	revalidateEvery = 2 * time.Second
	// touchEvery bounds how often LastSeenAt is written.
	touchEvery = time.Minute
	// idleEvict is how long an unused session stays cached.
	idleEvict = 10 * time.Minute
	// sessionIDLen is the length of our session ids: 128 random bits in hex.
	sessionIDLen = 32
)

// liveSession is a session this replica serves: the stored record plus what
// lives only in memory, its calls in flight and its SSE streams.
type liveSession struct {
	id, agentID, identity, version string
	// ctx is canceled when the session ends here (DELETE, ended elsewhere,
	// evicted, or Server.Close); calls and streams derive from it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	level  atomic.Int32 // minimum index into logLevels of notifications/message
	active atomic.Int32 // requests being served

	mu        sync.Mutex
	record    mcpgate.Session
	checkedAt time.Time
	usedAt    time.Time
	calls     map[string]context.CancelCauseFunc
	streams   streamSet
}

// newLive caches a stored session.
func (s *Server) newLive(rec *mcpgate.Session) *liveSession {
	ctx, cancel := context.WithCancelCause(s.base)
	now := s.now()
	ls := &liveSession{
		id: rec.ID, agentID: rec.AgentID, identity: rec.Identity, version: rec.ProtocolVersion,
		ctx: ctx, cancel: cancel, record: *rec, checkedAt: now, usedAt: now,
	}
	ls.level.Store(int32(levelOrDefault(rec.LogLevel)))
	return ls
}

// openSession checks the MCP-Protocol-Version header and finds the request's
// session, bound to agent and cred. It returns the version the request
// speaks. The caller must call release on the session when done.
func (s *Server) openSession(r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential) (*liveSession, string, error) {
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != "" && !supported(version) {
		return nil, "", mcpgate.Errorf(mcpgate.EINVALID, "unsupported MCP-Protocol-Version %q; supported versions: %s", version, supportedVersions)
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return nil, "", mcpgate.Errorf(mcpgate.EINVALID, "missing Mcp-Session-Id header: send initialize first, then echo the session id it returned")
	}
	ls, err := s.session(r.Context(), id, agent, cred)
	if err != nil {
		return nil, "", err
	}
	if version == "" {
		version = ls.version
	}
	return ls, version, nil
}

// session returns the live session id, checking that it belongs to agent
// and was opened by cred's identity.
func (s *Server) session(ctx context.Context, id string, agent *mcpgate.Agent, cred *mcpgate.Credential) (*liveSession, error) {
	ls, err := s.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if ls.agentID != agent.ID {
		return nil, sessionNotFound(id)
	}
	if ls.identity != cred.Identity() {
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "session %q was opened by another identity; refused: initialize a session of your own", id)
	}
	ls.active.Add(1)
	s.touch(ctx, ls)
	return ls, nil
}

// release marks the end of a request on the session.
func (ls *liveSession) release() { ls.active.Add(-1) }

// lookup finds a session in the cache, revalidated every few seconds, or
// in the store.
func (s *Server) lookup(ctx context.Context, id string) (*liveSession, error) {
	if !isSessionID(id) {
		return nil, sessionNotFound(id)
	}
	s.mu.RLock()
	ls := s.live[id]
	s.mu.RUnlock()
	if ls == nil {
		return s.load(ctx, id)
	}
	if ls.due(s.now()) {
		return s.revalidate(ctx, ls)
	}
	return ls, nil
}

// due reports whether the session must be checked against the store, and
// if so claims the check, so that concurrent requests don't all do it.
func (ls *liveSession) due(now time.Time) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if now.Sub(ls.checkedAt) < revalidateEvery {
		return false
	}
	ls.checkedAt = now
	return true
}

// load reads a session from the store into the cache.
func (s *Server) load(ctx context.Context, id string) (*liveSession, error) {
	rec, err := s.store.FindSession(ctx, id)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil, sessionNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	if rec.EndedAt != nil {
		return nil, sessionNotFound(id)
	}
	return s.cache(s.newLive(rec)), nil
}

// cache adds ls to the cache unless a concurrent request did first, and
// returns the cached one.
func (s *Server) cache(ls *liveSession) *liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.live[ls.id]; old != nil {
		ls.cancel(nil)
		return old
	}
	s.live[ls.id] = ls
	s.sweepLocked()
	return ls
}

// revalidate checks a cached session against the store. A store failure
// keeps the session serving from the cache.
func (s *Server) revalidate(ctx context.Context, ls *liveSession) (*liveSession, error) {
	rec, err := s.store.FindSession(ctx, ls.id)
	if code := mcpgate.ErrorCode(err); code == mcpgate.ENOTFOUND || (err == nil && rec.EndedAt != nil) {
		s.drop(ls, mcpgate.Errorf(mcpgate.ECANCELED, "the session ended"))
		return nil, sessionNotFound(ls.id)
	} else if err != nil {
		s.log.Warn("mcp: revalidate session", "session", ls.id, "err", err)
		return ls, nil
	}
	ls.mu.Lock()
	ls.record.LogLevel = rec.LogLevel
	ls.mu.Unlock()
	ls.level.Store(int32(levelOrDefault(rec.LogLevel)))
	return ls, nil
}

// touch records that the session was used, writing LastSeenAt to the store
// at most once every touchEvery.
func (s *Server) touch(ctx context.Context, ls *liveSession) {
	now := s.now()
	ls.mu.Lock()
	ls.usedAt = now
	if now.Sub(ls.record.LastSeenAt) < touchEvery {
		ls.mu.Unlock()
		return
	}
	ls.record.LastSeenAt = now
	ls.mu.Unlock()
	if err := s.store.TouchSession(ctx, ls.id, now); err != nil {
		s.log.Warn("mcp: record session last seen", "session", ls.id, "err", err)
	}
}

// drop removes a session from the cache and ends what it runs here: its
// calls are canceled with cause and its streams close.
func (s *Server) drop(ls *liveSession, cause error) {
	s.mu.Lock()
	if s.live[ls.id] == ls {
		delete(s.live, ls.id)
	}
	s.mu.Unlock()
	ls.cancel(cause)
	ls.mu.Lock()
	streams := ls.streams.take()
	ls.mu.Unlock()
	for _, st := range streams {
		st.close() // outside ls.mu: a stream may be busy writing to a slow client
	}
}

// sweepLocked evicts, at most once a minute, cached sessions unused for
// idleEvict that serve no request. They stay stored. s.mu must be held.
func (s *Server) sweepLocked() {
	now := s.now()
	if now.Sub(s.sweptAt) < time.Minute {
		return
	}
	s.sweptAt = now
	for id, ls := range s.live {
		ls.mu.Lock()
		idle := now.Sub(ls.usedAt) > idleEvict && ls.active.Load() == 0
		ls.mu.Unlock()
		if idle {
			delete(s.live, id)
			ls.cancel(nil)
		}
	}
}

// sessionNotFound is the error for an unknown or ended session.
func sessionNotFound(id string) error {
	if len(id) > 64 {
		id = id[:64] + "…"
	}
	return mcpgate.Errorf(mcpgate.ENOTFOUND, "session %q not found or ended: initialize a new session", id)
}

// isSessionID reports whether id has the shape of our session ids.
func isSessionID(id string) bool {
	if len(id) != sessionIDLen {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// startCall registers a call in flight under its request id and returns
// its context, which is canceled by notifications/cancelled, by the end of
// the session, or by Server.Close (never by the client disconnecting).
func (ls *liveSession) startCall(key string) (context.Context, context.CancelCauseFunc, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, dup := ls.calls[key]; dup {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancelCause(ls.ctx)
	if ls.calls == nil {
		ls.calls = make(map[string]context.CancelCauseFunc)
	}
	ls.calls[key] = cancel
	return ctx, cancel, true
}

// endCall unregisters a finished call.
func (ls *liveSession) endCall(key string, cancel context.CancelCauseFunc) {
	ls.mu.Lock()
	delete(ls.calls, key)
	ls.mu.Unlock()
	cancel(nil)
}

// cancelCall cancels the call in flight with the given request id, if any.
func (ls *liveSession) cancelCall(key, reason string) {
	ls.mu.Lock()
	cancel := ls.calls[key]
	ls.mu.Unlock()
	if cancel != nil {
		cancel(mcpgate.Errorf(mcpgate.ECANCELED, "the client cancelled the request: %s", reason))
	}
}
