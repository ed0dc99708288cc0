package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Timings of the supervisor.
const (
	minBackoff    = 100 * time.Millisecond // first wait before reconnecting
	maxBackoff    = 30 * time.Second       // longest wait between attempts
	stableAfter   = 10 * time.Second       // a session that lived this long resets the backoff
	coalesceDelay = 100 * time.Millisecond // list_changed notifications within it cause one discovery
)

// maxOwnSessions bounds the upstream sessions a link opens for downstream
// sessions of their own (for stdio, one child process each). Beyond it,
// calls of further downstream sessions use the pooled session, where the
// upstream cannot send server→client requests.
const maxOwnSessions = 64

// errStopped is the cause of a link that was stopped.
var errStopped = errors.New("stopped")

// link is one mcp skill's connection to its upstream: a pooled session
// kept up by a supervisor goroutine, the sessions of downstream sessions
// that need server→client requests, and the subscriptions relayed.
type link struct {
	m          *Manager
	hash       string
	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{}
	rediscover chan struct{}
	events     *events

	mu         sync.Mutex
	skill      *mcpgate.Skill
	main       *session
	connecting bool
	lastErr    error
	wake       chan struct{}                // closed and replaced when main, connecting or lastErr change
	own        map[string]*ownSession       // by downstream session
	ownFull    bool                         // maxOwnSessions was reached and logged
	subs       map[string]map[string]string // upstream URI → downstream session → URI it subscribed as
	caps       *serverCaps
	relisten   context.CancelFunc // ends the current subscriptions/listen request, so that it starts again
	cache      listCache          // a stateless upstream's listings, while their ttlMs lasts

	health healthWriter
}

// startLink starts the supervisor of a skill's connection.
func (m *Manager) startLink(sk *mcpgate.Skill) *link {
	ctx, cancel := context.WithCancel(context.Background())
	l := &link{
		m: m, hash: settingsHash(sk), ctx: ctx, cancel: cancel, done: make(chan struct{}),
		rediscover: make(chan struct{}, 1), skill: sk, wake: make(chan struct{}),
		own: map[string]*ownSession{}, subs: map[string]map[string]string{}, connecting: true,
	}
	l.health.init(m, sk)
	l.events = &events{toolsChanged: l.toolsChanged, listChanged: l.listChanged, resourceUpdated: l.resourceUpdated}
	go l.run()
	return l
}

// settingsHash identifies the settings that need a new connection when
// they change.
func settingsHash(sk *mcpgate.Skill) string {
	b, _ := json.Marshal([]any{sk.URL, sk.Headers, sk.Command, sk.Args, sk.Env, sk.Cwd, sk.AllowPrivate, sk.Prefix, sk.Timeout})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sortLinks orders links by skill name.
func sortLinks(ls []*link) {
	slices.SortFunc(ls, func(a, b *link) int { return strings.Compare(a.name(), b.name()) })
}

// name is the skill's name.
func (l *link) name() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skill.Name
}

// current returns the skill as last synced.
func (l *link) current() *mcpgate.Skill {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skill
}

// setSkill records a newer version of the skill with the same settings.
func (l *link) setSkill(sk *mcpgate.Skill) {
	l.mu.Lock()
	l.skill = sk
	l.mu.Unlock()
}

// run keeps the pooled session up until the link stops: it connects,
// discovers, serves, and reconnects with backoff when the session ends.
// While a dial failure is the last word calls fail at once; after a
// session ended they wait for the next attempt.
func (l *link) run() {
	defer close(l.done)
	delay := minBackoff
	for l.ctx.Err() == nil {
		l.setState(nil, true, nil)
		started := time.Now()
		s, err := l.dialMain()
		if err == nil {
			err = l.serve(s)
			if l.ctx.Err() != nil {
				return
			}
			l.health.failed(err)
			l.setState(nil, true, err)
		} else {
			l.setState(nil, false, err)
		}
		l.m.log.Warn("upstream unavailable", "agent", l.current().AgentID, "skill", l.name(), "err", err, "retry_in", delay)
		if time.Since(started) > stableAfter {
			delay = minBackoff
		}
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, maxBackoff)
	}
}

// dialMain dials the pooled session.
func (l *link) dialMain() (*session, error) {
	sk := l.current()
	ctx, cancel := context.WithTimeout(l.ctx, sk.CallTimeout())
	defer cancel()
	return dial(ctx, l.dialOptions(sk, clientCaps{}))
}

// dialOptions returns the options of a new session with the given client
// capabilities.
func (l *link) dialOptions(sk *mcpgate.Skill, caps clientCaps) *dialOptions {
	return &dialOptions{skill: sk, m: l.m, caps: caps, events: l.events}
}

// serve makes s the pooled session, discovers its tools and handles
// rediscovery requests until s ends or the link stops.
func (l *link) serve(s *session) error {
	l.mu.Lock()
	l.caps = parseServerCaps(s.cs.Capabilities())
	l.mu.Unlock()
	l.cache.drop()
	l.setState(s, false, nil)
	l.discover(s)
	if s.cs.Stateless() {
		go l.listen(s)
	} else {
		l.resubscribe(s)
	}
	for {
		select {
		case <-s.closed:
			return fmt.Errorf("the upstream session ended: %w", s.endErr())
		case <-l.ctx.Done():
			s.close()
			return errStopped
		case <-l.rediscover:
			if l.settle(s) {
				l.discover(s)
			}
		}
	}
}

// settle waits for a burst of list_changed notifications to pass and
// drains them; false when the session or the link ended meanwhile.
func (l *link) settle(s *session) bool {
	t := time.NewTimer(coalesceDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.closed:
		return false
	case <-l.ctx.Done():
		return false
	}
	select {
	case <-l.rediscover:
	default:
	}
	return true
}

// setState records the pooled session and the state of the connection,
// wakes the calls waiting for it and writes the health.
func (l *link) setState(s *session, connecting bool, err error) {
	l.mu.Lock()
	l.main, l.connecting, l.lastErr = s, connecting, err
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	switch {
	case err != nil && !connecting:
		l.health.failed(err)
	case err != nil:
	case connecting:
		l.health.state(mcpgate.HealthConnecting)
	case s != nil:
		l.health.connected(s.cs.ProtocolVersion())
	}
}

// mainSession returns the pooled session, waiting while a connection
// attempt is under way; EUNAVAILABLE when the last attempt failed.
func (l *link) mainSession(ctx context.Context) (*session, error) {
	for {
		l.mu.Lock()
		s, connecting, err, wake, sk := l.main, l.connecting, l.lastErr, l.wake, l.skill
		l.mu.Unlock()
		if s != nil && s.alive() {
			return s, nil
		}
		if !connecting && err != nil {
			return nil, unavailable(sk, err)
		}
		select {
		case <-wake:
		case <-l.done:
			return nil, unavailable(sk, errStopped)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ownSession is a downstream session's own upstream session, or the dial
// of it under way, which concurrent calls of that session wait for.
type ownSession struct {
	ready chan struct{} // closed once the dial ended
	s     *session      // once ready: the session, nil if the dial failed
	err   error         // once ready: why s is nil
}

// errSessionGone is why a downstream session's own upstream session was
// closed while it was being dialed.
var errSessionGone = errors.New("the MCP session ended")

// sessionFor returns the session a call from a downstream session uses:
// its own when the host can answer server→client requests, else (or when
// the link has maxOwnSessions already) the pooled one. A call outside any
// session whose client names a scope (a 2026-07-28 call answered through
// MRTR) gets one of its own the same way, keyed by the scope, which ends
// through CloseSession like a session. Concurrent calls
// of one downstream session share one dial.
func (l *link) sessionFor(ctx context.Context, sessionID string, client mcpgate.ClientRequester) (*session, error) {
	if sessionID == "" {
		sessionID = scopeOf(client)
	}
	if sessionID == "" || !wantsOwnSession(client) || l.stateless() {
		// A stateless upstream gets each request's capabilities with
		// the request: the pooled session serves every host.
		return l.mainSession(ctx)
	}
	for {
		l.mu.Lock()
		o, sk := l.own[sessionID], l.skill
		if o == nil {
			if len(l.own) >= l.m.maxOwn {
				warn := !l.ownFull
				l.ownFull = true
				l.mu.Unlock()
				if warn {
					l.m.log.Warn("upstream: too many MCP sessions need an upstream session of their own; further ones use the shared session, without sampling, elicitation and roots",
						"agent", sk.AgentID, "skill", sk.Name, "limit", l.m.maxOwn)
				}
				return l.mainSession(ctx)
			}
			o = &ownSession{ready: make(chan struct{})}
			l.own[sessionID] = o
			l.mu.Unlock()
			return l.dialOwn(ctx, sessionID, o, sk, client)
		}
		l.mu.Unlock()
		select {
		case <-o.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if o.s == nil {
			return nil, o.err
		}
		if o.s.alive() {
			return o.s, nil
		}
		l.dropOwn(sessionID, o)
	}
}

// dialOwn dials the own session o of a downstream session, which the
// caller registered. Should the downstream session end or the link stop
// meanwhile, the new session is closed rather than kept.
func (l *link) dialOwn(ctx context.Context, sessionID string, o *ownSession, sk *mcpgate.Skill, client mcpgate.ClientRequester) (*session, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.ctx, cancel)()
	s, err := dial(ctx, l.dialOptions(sk, hostCaps(client.ClientCapabilities())))
	l.mu.Lock()
	kept := l.own[sessionID] == o && l.ctx.Err() == nil
	if err == nil && kept {
		o.s = s
		close(o.ready)
		l.mu.Unlock()
		return s, nil
	}
	l.forgetOwn(sessionID, o)
	l.mu.Unlock()
	if err == nil {
		s.close()
		err = unavailable(sk, errSessionGone)
	}
	o.err = err
	close(o.ready)
	return nil, err
}

// dropOwn forgets o, a downstream session's own session that ended, unless
// it was replaced already.
func (l *link) dropOwn(sessionID string, o *ownSession) {
	l.mu.Lock()
	l.forgetOwn(sessionID, o)
	l.mu.Unlock()
}

// forgetOwn removes o, when it is still the downstream session's own
// session, making room for another under maxOwnSessions; l.mu is held.
func (l *link) forgetOwn(sessionID string, o *ownSession) {
	if o != nil && l.own[sessionID] == o {
		delete(l.own, sessionID)
		l.ownFull = false
	}
}

// closeSession closes the downstream session's own upstream session and
// drops its subscriptions. A dial under way closes what it opens.
func (l *link) closeSession(sessionID string) {
	l.mu.Lock()
	o := l.own[sessionID]
	l.forgetOwn(sessionID, o)
	var gone []string
	for uri, subs := range l.subs {
		if _, ok := subs[sessionID]; ok {
			delete(subs, sessionID)
			if len(subs) == 0 {
				delete(l.subs, uri)
				gone = append(gone, uri)
			}
		}
	}
	main := l.main
	l.mu.Unlock()
	if o != nil {
		select {
		case <-o.ready:
			if o.s != nil {
				o.s.close()
			}
		default:
		}
	}
	if main != nil && len(gone) > 0 {
		go l.unsubscribeAll(main, gone)
	}
}

// stop ends the supervisor and every session, and records the skill as
// stopped.
func (l *link) stop(ctx context.Context) {
	l.cancel()
	<-l.done
	l.mu.Lock()
	own := l.own
	l.own = map[string]*ownSession{}
	l.main = nil
	l.mu.Unlock()
	// Dials under way end with l.ctx and close what they opened; the
	// sessions close in parallel, each child having its grace period.
	var wg sync.WaitGroup
	for _, o := range own {
		wg.Go(func() {
			<-o.ready
			if o.s != nil {
				o.s.close()
			}
		})
	}
	wg.Wait()
	l.health.stopped(ctx)
}

// toolsChanged asks the supervisor to rediscover; notifications arriving
// while one request is pending are absorbed.
func (l *link) toolsChanged() {
	select {
	case l.rediscover <- struct{}{}:
	default:
	}
}

// listChanged passes a resources or prompts list_changed to the agent's
// sessions.
func (l *link) listChanged(method string) {
	l.cache.drop(changedListings[method]...)
	if l.m.sessions != nil {
		l.m.sessions.NotifyAgent(l.current().AgentID, method, json.RawMessage(`{}`))
	}
}

// unavailable is the error of a skill whose upstream cannot take calls.
func unavailable(sk *mcpgate.Skill, err error) error {
	var e *mcpgate.Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%w (%v)", mcpgate.Errorf(mcpgate.EUNAVAILABLE, "skill %q: its upstream MCP server is unavailable: %s", sk.Name, shortError(err)), err)
}

// shortError is an error's text cut to a length fit for a message.
func shortError(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
