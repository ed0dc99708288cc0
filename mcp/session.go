package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/lazyctx"
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

// liveSession is a session this replica serves: what it needs of the
// stored record plus what lives only in memory, its calls in flight and its
// SSE streams.
type liveSession struct {
	id, agentID, identity, version string
	clientCaps                     json.RawMessage // declared at initialize
	// ctx is canceled when the session ends here (DELETE, ended elsewhere,
	// evicted, or Server.Close); calls and streams derive from it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	level  atomic.Int32 // minimum severity (see levelIndex) of notifications/message
	active atomic.Int32 // requests being served
	ended  atomic.Bool  // end has run

	mu        sync.Mutex
	seenAt    time.Time // LastSeenAt as last written to the store
	checkedAt time.Time
	usedAt    time.Time
	calls     map[string]*lazyctx.Context
	waiters   map[string]chan clientResponse // server→client requests, by id key
	streams   streamSet

	replay replay // the latest events of its streams
}

// newLive caches a stored session.
func (s *Server) newLive(rec *mcpgate.Session) *liveSession {
	ctx, cancel := context.WithCancelCause(s.base)
	now := s.now()
	ls := &liveSession{
		id: rec.ID, agentID: rec.AgentID, identity: rec.Identity, version: rec.ProtocolVersion, clientCaps: rec.ClientCapabilities,
		ctx: ctx, cancel: cancel, seenAt: rec.LastSeenAt, checkedAt: now, usedAt: now,
	}
	ls.level.Store(int32(levelOrDefault(rec.LogLevel)))
	ls.replay.log = s.sessionLog(rec.ID)
	return ls
}

// openSession checks the MCP-Protocol-Version header and finds the request's
// session, bound to agent and cred. The caller must call release on the
// session when done.
//
// A supported version in the header other than the negotiated one is
// accepted, and the session's streams keep following the negotiated
// version: a client that negotiated 2025-11-25 reads priming events
// whatever a later header says (the conformance suite's SSE scenarios send
// 2025-03-26 in such sessions and expect priming events).
func (s *Server) openSession(r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential) (*liveSession, error) {
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != "" && !supported(version) {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "unsupported MCP-Protocol-Version %q; supported versions: %s", version, supportedVersions)
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "missing Mcp-Session-Id header: send initialize first, then echo the session id it returned")
	}
	return s.session(r.Context(), id, agent, cred)
}

// session returns the live session id, checking that it belongs to agent
// and was opened by cred's identity. The caller must call release on it.
func (s *Server) session(ctx context.Context, id string, agent *mcpgate.Agent, cred *mcpgate.Credential) (*liveSession, error) {
	ls, err := s.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if ls.agentID != agent.ID {
		ls.release()
		return nil, sessionNotFound(id)
	}
	if !cred.HasIdentity(ls.identity) {
		ls.release()
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "session %q was opened by another identity; refused: initialize a session of your own", id)
	}
	s.touch(ctx, ls)
	return ls, nil
}

// release marks the end of a request on the session.
func (ls *liveSession) release() { ls.active.Add(-1) }

// lookup finds a session in the cache, revalidated every few seconds, or
// in the store. The session it returns counts the request as active,
// marked while the cache's lock is held so that it is never evicted as
// idle meanwhile; the caller must call release on it.
func (s *Server) lookup(ctx context.Context, id string) (*liveSession, error) {
	if !isSessionID(id) {
		return nil, sessionNotFound(id)
	}
	s.mu.RLock()
	ls := s.live[id]
	if ls != nil {
		ls.active.Add(1)
	}
	s.mu.RUnlock()
	if ls == nil {
		return s.load(ctx, id)
	}
	if s.ended(ctx, ls) {
		ls.release()
		return nil, sessionNotFound(id)
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
// returns the cached one, counting the caller's request as active (the
// caller must call release on it). It keeps the identity within its cap.
func (s *Server) cache(ls *liveSession) *liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.live[ls.id]; old != nil {
		ls.cancel(nil)
		old.active.Add(1)
		return old
	}
	ls.active.Add(1)
	s.live[ls.id] = ls
	byID := s.byIdentity[ls.identity]
	if byID == nil {
		byID = make(map[string]*liveSession)
		s.byIdentity[ls.identity] = byID
	}
	byID[ls.id] = ls
	s.capLocked(byID)
	s.sweepLocked()
	return ls
}

// capLocked evicts the least recently used idle sessions of one identity
// (byID) while it has more than maxPerIdentity cached. A session serving a
// request is never evicted, so the cap is exceeded only while all of the
// identity's sessions are busy. s.mu must be held.
func (s *Server) capLocked(byID map[string]*liveSession) {
	for len(byID) > s.maxPerIdentity {
		lru := leastRecentlyUsedIdle(byID)
		if lru == nil {
			return
		}
		s.evictLocked(lru)
	}
}

// leastRecentlyUsedIdle returns the session serving no request that was
// used longest ago, or nil if all are busy.
func leastRecentlyUsedIdle(sessions map[string]*liveSession) *liveSession {
	var lru *liveSession
	var lruAt time.Time
	for _, ls := range sessions {
		ls.mu.Lock()
		usedAt := ls.usedAt
		ls.mu.Unlock()
		if ls.active.Load() == 0 && (lru == nil || usedAt.Before(lruAt)) {
			lru, lruAt = ls, usedAt
		}
	}
	return lru
}

// evictLocked removes ls from the cache and cancels its context. It stays
// stored. s.mu must be held.
func (s *Server) evictLocked(ls *liveSession) {
	s.forgetLocked(ls)
	s.end(ls, nil)
}

// end cancels what ls runs here with cause and, the first time, tells
// Options.SessionClosed off the request path.
func (s *Server) end(ls *liveSession, cause error) {
	ls.cancel(cause)
	if s.sessionClosed != nil && ls.ended.CompareAndSwap(false, true) {
		go s.sessionClosed(ls.id)
	}
}

// forgetLocked removes ls from the cache, if it is there. s.mu must be
// held.
func (s *Server) forgetLocked(ls *liveSession) {
	if s.live[ls.id] != ls {
		return
	}
	delete(s.live, ls.id)
	byID := s.byIdentity[ls.identity]
	delete(byID, ls.id)
	if len(byID) == 0 {
		delete(s.byIdentity, ls.identity)
	}
}

// ended revalidates a session when due and reports whether it ended.
func (s *Server) ended(ctx context.Context, ls *liveSession) bool {
	return ls.due(s.now()) && s.revalidate(ctx, ls)
}

// revalidate checks a cached session against the store, drops it if it
// ended and reports whether it did. A store failure keeps the session
// serving from the cache.
func (s *Server) revalidate(ctx context.Context, ls *liveSession) bool {
	rec, err := s.store.FindSession(ctx, ls.id)
	if code := mcpgate.ErrorCode(err); code == mcpgate.ENOTFOUND || (err == nil && rec.EndedAt != nil) {
		s.drop(ls, mcpgate.Errorf(mcpgate.ECANCELED, "the session ended"))
		return true
	} else if err != nil {
		s.log.Warn("mcp: revalidate session", "session", ls.id, "err", err)
		return false
	}
	ls.level.Store(int32(levelOrDefault(rec.LogLevel)))
	return false
}

// touch records that the session was used, writing LastSeenAt to the store
// at most once every touchEvery.
func (s *Server) touch(ctx context.Context, ls *liveSession) {
	now := s.now()
	ls.mu.Lock()
	ls.usedAt = now
	if now.Sub(ls.seenAt) < touchEvery {
		ls.mu.Unlock()
		return
	}
	ls.seenAt = now
	ls.mu.Unlock()
	if err := s.store.TouchSession(ctx, ls.id, now); err != nil {
		s.log.Warn("mcp: record session last seen", "session", ls.id, "err", err)
	}
}

// drop removes a session from the cache and ends what it runs here: its
// calls are canceled with cause and its streams close.
func (s *Server) drop(ls *liveSession, cause error) {
	s.mu.Lock()
	s.forgetLocked(ls)
	s.mu.Unlock()
	s.end(ls, cause)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, st := range ls.streams.take() {
		st.close()
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
	for _, ls := range s.live {
		ls.mu.Lock()
		idle := now.Sub(ls.usedAt) > idleEvict && ls.active.Load() == 0
		ls.mu.Unlock()
		if idle {
			s.evictLocked(ls)
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
// the session, or by Server.Close (never by the client disconnecting). It
// is a lazyctx.Context: a call answered before anything waits on it makes
// no context of the context package, nor a child in the session's.
func (ls *liveSession) startCall(key string) (*lazyctx.Context, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, dup := ls.calls[key]; dup {
		return nil, false
	}
	ctx := lazyctx.WithCancel(ls.ctx)
	if ls.calls == nil {
		ls.calls = make(map[string]*lazyctx.Context)
	}
	ls.calls[key] = ctx
	return ctx, true
}

// endCall unregisters a finished call, its id free again at once, and
// ends its context: at once when it was never made, once its reply went
// out (AfterReply) when it was.
func (ls *liveSession) endCall(key string, n mcpgate.Notifier, ctx *lazyctx.Context) {
	ls.mu.Lock()
	delete(ls.calls, key)
	ls.mu.Unlock()
	if end := ctx.End(); end != nil {
		mcpgate.AfterReply(n, end)
	}
}

// cancelCall cancels the call in flight with the given request id, if any,
// reporting whether there was one.
func (ls *liveSession) cancelCall(key, reason string) bool {
	ls.mu.Lock()
	ctx := ls.calls[key]
	ls.mu.Unlock()
	if ctx != nil {
		ctx.Cancel(mcpgate.Errorf(mcpgate.ECANCELED, "the client cancelled the request: %s", reason))
	}
	return ctx != nil
}
